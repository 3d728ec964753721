"""The base every wing of the accountant stands on, and the one shared place of the three packages'
common vocabulary: array and adjacency types and the unit roundoff (``types``), validation of user
input (``validation``), outward rounding (``rounding``), the one bracket search (``search``), the
lower convex hull (``hull``), the first-order linear recurrence (``recurrence``), the standard normal
distribution function (``normal``) and lazy package exports (``lazy``). Imports nothing else of ours."""
