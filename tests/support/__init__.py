"""Test support: fixtures and helpers the tests (and the benchmarks) share, outside the shipped
packages. Test modules import from here, never from one another."""
