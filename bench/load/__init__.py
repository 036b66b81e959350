"""Load throughput, online and bulk, and the synthetic Freebase-shaped KG the bulk loads read."""
