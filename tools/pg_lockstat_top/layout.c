/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The lines of the screen that each section of a report gets
 *
 * On a terminal the report must fit the window, and no section may vanish
 * because the ones above it took every line (the tranche table alone
 * would fill a window of 24 lines, and cut the sections below it off
 * without a word).  So each section shown gets its heading
 * and one more line (a row, the line that says it has none, or the mark of
 * a cut), and the lines left are dealt out one row at a time to each
 * section in turn, as long as it has rows left and the row fits.  A
 * section with few rows gets them all and leaves the rest to the others;
 * a section cut short ends with a line "... N more rows" (render.c), which
 * the arithmetic here counts.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/layout.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

static int	section_lines(const SectionSize *s, int shown);


/*
 * fit_sections
 *		Set the rows shown of each of the nsections sections so that,
 *		with their headings and marks, they take at most lines lines (0:
 *		no limit, every row shown).  A section with rows < 0 is not shown
 *		and takes nothing.  When even the headings and one line each do not
 *		fit, each section still gets them, and the screen cuts the bottom
 *		(see output.c).
 */
void
fit_sections(SectionSize *sections, int nsections, int lines)
{
	int			used = 0;
	bool		grew;

	for (int s = 0; s < nsections; s++)
	{
		SectionSize *sec = &sections[s];

		sec->shown = (lines <= 0 && sec->rows > 0) ? sec->rows : 0;
		if (sec->rows >= 0)
			used += section_lines(sec, sec->shown);
	}
	if (lines <= 0)
		return;

	/* one row to each section in turn, while one fits */
	do
	{
		grew = false;
		for (int s = 0; s < nsections; s++)
		{
			SectionSize *sec = &sections[s];
			int			more;

			if (sec->shown >= sec->rows)
				continue;
			more = section_lines(sec, sec->shown + 1) -
				section_lines(sec, sec->shown);
			if (used + more > lines)
				continue;
			sec->shown++;
			used += more;
			grew = true;
		}
	} while (grew);
}

/*
 * section_lines
 *		The lines that section s takes with shown of its rows: its heading,
 *		the rows, and one line more if it has no row at all (the line that
 *		says so) or if rows are left out (the mark of the cut).
 */
static int
section_lines(const SectionSize *s, int shown)
{
	int			lines = 1 + shown * s->row_lines;

	if (s->rows == 0 || shown < s->rows)
		lines++;
	return lines;
}
