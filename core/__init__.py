"""The ground floor: shared types, errors, configuration and text rules; imports nothing else of kgqa."""
