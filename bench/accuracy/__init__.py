"""Answer accuracy: our question sets, auto's route, a method's stages or chains, claim verification."""
