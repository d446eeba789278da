"""Talking to a model: every LLM call, and what is known of the model it goes to.

``client`` is the one way a call is made (``LLM``: completion, streaming, retries, the
usage ledger, the window); ``models`` says which model a name means and where it is
served; ``capabilities`` what a model is offered (tools, the edit format); ``structured``
and its helpers how a call asks for JSON and what to do when refused; ``local`` and
``local_calls`` the embedded model, called without litellm; ``repetition`` notices a
stream that repeats itself; ``lenient_json`` reads the JSON a model meant to write.
"""
