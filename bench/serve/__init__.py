"""Concurrent clients, in-process and over HTTP, and `kgqa serve`'s memory."""
