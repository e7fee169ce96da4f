"""Page ranking: sliced Gauss-Seidel PageRank (paper §5), OPIC and LiveRank orderings."""
