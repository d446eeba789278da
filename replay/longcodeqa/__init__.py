"""LongCodeQA-style multiple-choice questions about a repository."""
