"""Private linear models: DP least squares and private ERM (label DP or full DP)."""
