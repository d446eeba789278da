"""SWE-ContextBench-style chains: experience tasks, then related tasks."""
