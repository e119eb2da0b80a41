"""Small pieces every view uses: plain text, the wheel rule, fitting, one-line notices,
collapsed splitters brought back, the theme, a choice delegate; and what several parts share:
the workspace's change signal, the frame clock, the collector's timing, the optimizing buttons."""
