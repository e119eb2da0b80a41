"""What runs show and are judged by: verdicts, evaluation, comparison, presentation of events,
exports."""
