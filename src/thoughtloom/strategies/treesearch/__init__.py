"""The tree-search kernel shared by ThoughtSculpt, Tree of Thoughts and Self-Refine.

``tree`` (nodes, backpropagation, JSON dump), ``world`` (what the search
asks of a task), ``reading`` (reading the evaluator's scores and feedback).
"""
