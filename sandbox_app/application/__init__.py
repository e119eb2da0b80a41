"""The application layer: what the window, every compare lane, the command line and ``eval``
share to make a run. Qt-free; it imports core and backends, and the front ends import it.

``run_builder.build_run`` is the one place a live run's engine is made (a fork, a rerun and
a step-through run included); ``backend_choice.BackendChoice`` is what a model panel, a
``--lane`` or a scenario lane says to run against.
"""
