"""One interpreter (Trace subclass) per transformation: staging to a jaxpr, lowering to the core."""
