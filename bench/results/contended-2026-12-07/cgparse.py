#!/usr/bin/env python3
"""Minimal reader of callgrind output files (--dump-instr=yes).

Aggregates over all given files, by function name (whatever file an inlined
part is attributed to): self Ir, inclusive Ir, calls into the function, and
the Ir (execution count) of every instruction address per function.

usage: cgparse.py FUNC [FUNC...] -- FILE [FILE...]
       cgparse.py --addr FUNC -- FILE...   (per-address Ir of FUNC)
"""
import collections
import re
import sys


def parse(path, acc):
    names = {}          # (kind, id) -> name
    fn = None
    pos_prev = [0, 0]
    pending_call = None  # (target fn, count)
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in '+-*':
                parts = line.split()
                # positions: instr line
                vals = []
                for i, p in enumerate(parts[:2]):
                    if p == '*':
                        v = pos_prev[i]
                    elif p[0] in '+-':
                        v = pos_prev[i] + int(p, 0)
                    else:
                        v = int(p, 0)
                    vals.append(v)
                pos_prev = vals
                cost = int(parts[2]) if len(parts) > 2 else 0
                if pending_call is not None:
                    tgt, cnt = pending_call
                    acc['incl_calls'][fn] += cost
                    acc['calls'][tgt] += cnt
                    acc['callsite'][(fn, tgt)] += cnt
                    acc['callcost'][(fn, tgt)] += cost
                    pending_call = None
                else:
                    acc['self'][fn] += cost
                    acc['addr'][fn][vals[0]] += cost
                continue
            m = re.match(r'(\w+)=(.*)$', line)
            if not m:
                continue
            key, val = m.groups()
            if key in ('fn', 'cfn', 'fl', 'fi', 'fe', 'cfi', 'cfl', 'ob', 'cob'):
                kind = 'fn' if key in ('fn', 'cfn') else (
                    'ob' if key in ('ob', 'cob') else 'fl')
                mm = re.match(r'\((\d+)\)\s*(.*)$', val)
                if mm:
                    if mm.group(2):
                        names[(kind, mm.group(1))] = mm.group(2)
                    name = names[(kind, mm.group(1))]
                else:
                    name = val
                if key == 'fn':
                    fn = name
                elif key == 'cfn':
                    cfn = name
            elif key == 'calls':
                cnt = int(val.split()[0])
                pending_call = (cfn, cnt)


def main():
    args = sys.argv[1:]
    addr_mode = False
    if args and args[0] == '--addr':
        addr_mode = True
        args = args[1:]
    sep = args.index('--')
    funcs, files = args[:sep], args[sep + 1:]
    acc = {'self': collections.Counter(), 'incl_calls': collections.Counter(),
           'calls': collections.Counter(),
           'callsite': collections.Counter(), 'callcost': collections.Counter(),
           'addr': collections.defaultdict(collections.Counter)}
    for p in files:
        parse(p, acc)
    if addr_mode:
        for fname in funcs:
            print(f'# {fname}: address Ir')
            for a, v in sorted(acc['addr'][fname].items()):
                print(f'{a:#x} {v}')
        return
    print(f'{"function":45} {"calls":>8} {"self Ir":>10} {"incl Ir":>10} {"incl/call":>10}')
    for fname in funcs:
        s = acc['self'][fname]
        inc = s + acc['incl_calls'][fname]
        n = acc['calls'][fname]
        per = f'{inc / n:.1f}' if n else '-'
        print(f'{fname:45} {n:8} {s:10} {inc:10} {per:>10}')
    print()
    print('callees (caller -> callee: calls, inclusive Ir):')
    for (a, b), n in sorted(acc['callsite'].items()):
        if a in funcs:
            print(f'  {a} -> {b}: {n}, {acc["callcost"][(a, b)]}')


if __name__ == '__main__':
    main()
