"""dpcert mechanisms: declared queries with symbolic sensitivity, guarantees and samplers."""
