"""Human grades in the window: a 👍/👎 and a note on a run, the blind pairwise review, the
judge's agreement with the grades."""
