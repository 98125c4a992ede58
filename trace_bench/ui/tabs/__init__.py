"""The four tabs of the UI; each ``build(ctx)`` lays out its components inside the open ``gr.Tab``."""
