"""Sample sets: N traces of one question, and the tree of where they part ways.

- ``request``: ``SampleRequest``, the one carrier of a sampling job's settings, and its caps;
- ``draw``: N samples on the local model (one prefill, one batch) or an endpoint, as traces;
- ``sets``: sets in the trace store (a dataset named after the set, tagged ``sample-set``);
- ``group``: sets made from stored or imported traces that share a question;
- ``steps``: what makes two steps equivalent, and two samples' steps aligned;
- ``tree``: the samples merged step by step into a prefix tree, with forks and the majority;
- ``view_data``: the tree as JSON-ready layout for a view.
"""
