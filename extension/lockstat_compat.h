/*-------------------------------------------------------------------------
 *
 * lockstat_compat.h
 *	  What differs between the PostgreSQL majors that pg_lockstat supports
 *
 * pg_lockstat builds from one source against PostgreSQL 15 and 18, each
 * with its own core patch series (patches/pg15, patches/pg18).  Every
 * difference in the server's API that the extension meets is wrapped here,
 * in static inline functions and macros of our own names; no core name is
 * redefined.  The version tests are on PG_VERSION_NUM, where the API
 * changed (16 for the place of queryjumble.h and the _PG_init declaration,
 * 17 for ProcNumber, 18 for PG_MODULE_MAGIC_EXT and wait_classes.h), so that a port to 17 starts from the right branch;
 * doc/majors-and-architectures.md says which majors are built and tested.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCKSTAT_COMPAT_H
#define LOCKSTAT_COMPAT_H

#include "miscadmin.h"
#include "storage/proc.h"

#if PG_VERSION_NUM >= 180000
#include "utils/wait_classes.h"
#else
#include "utils/wait_event.h"
#endif

/* IsQueryIdEnabled(): nodes/queryjumble.h from 16 on, utils/ before */
#if PG_VERSION_NUM >= 160000
#include "nodes/queryjumble.h"
#else
#include "utils/queryjumble.h"
#endif

#if PG_VERSION_NUM < 150000
#error "pg_lockstat needs PostgreSQL 15 or later"
#endif

/*
 * The module magic block, with name and version where the server records
 * them (18 and later, PG_MODULE_MAGIC_EXT); a plain PG_MODULE_MAGIC before.
 */
#if PG_VERSION_NUM >= 180000
#define LOCKSTAT_MODULE_MAGIC(modname, modversion) \
	PG_MODULE_MAGIC_EXT(.name = (modname), .version = (modversion))
#else
#define LOCKSTAT_MODULE_MAGIC(modname, modversion) PG_MODULE_MAGIC
#endif

/*
 * The number of BackendType values: BACKEND_NUM_TYPES from 17 on; before,
 * B_LOGGER is the last value.
 */
#if PG_VERSION_NUM >= 170000
#define LOCKSTAT_NUM_BACKEND_TYPES	BACKEND_NUM_TYPES
#else
#define LOCKSTAT_NUM_BACKEND_TYPES	(B_LOGGER + 1)
#endif

/*
 * fmgr.h declares the library's initialization function from 16 on; before,
 * every library declares it.
 */
#if PG_VERSION_NUM < 160000
extern PGDLLEXPORT void _PG_init(void);
#endif

/*
 * This process's index in ProcGlobal->allProcs, the number that its
 * pg_lockstat slots are indexed by: MyProcNumber on 17 and later,
 * MyProc->pgprocno before.  -1 while the process has no PGPROC (the
 * postmaster, or a child before InitProcess() or InitAuxiliaryProcess()).
 * On every major, regular backends take the numbers below MaxBackends and
 * auxiliary processes the next NUM_AUXILIARY_PROCS.
 */
static inline int
lockstat_my_proc_number(void)
{
#if PG_VERSION_NUM >= 170000
	return MyProcNumber == INVALID_PROC_NUMBER ? -1 : (int) MyProcNumber;
#else
	return MyProc == NULL ? -1 : MyProc->pgprocno;
#endif
}

/* the same number of another process, from its PGPROC */
static inline int
lockstat_proc_number(PGPROC *proc)
{
#if PG_VERSION_NUM >= 170000
	return (int) GetNumberFromPGProc(proc);
#else
	return proc->pgprocno;
#endif
}

#endif							/* LOCKSTAT_COMPAT_H */
