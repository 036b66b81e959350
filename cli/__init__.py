"""kgqa command line."""
