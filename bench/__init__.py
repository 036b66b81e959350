"""kgqa's measurements, grouped by what they measure; each script runs from the repository root as
``python -m bench.<group>.<name>`` (see bench/README.md). Not part of the kgqa package."""
