"""The data everything else passes around: messages, events, results and the task schema."""
