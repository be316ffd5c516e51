"""The route table: every tool a client is offered is one handler under its name.

Each kind of tool has its own handler (:class:`~gocode.routes.handler.Handler`): a server's or
the Python tools' own tool passed through (:mod:`~gocode.routes.passthrough`), ``execute_go_code``
(:mod:`~gocode.routes.code`), ``search_go_tools`` (:mod:`~gocode.routes.search`),
``step_go_code`` (:mod:`~gocode.routes.step`), a saved program and ``save_go_program``
(:mod:`~gocode.routes.saved`). :mod:`~gocode.routes.table` builds the table with the tool list;
the handlers that run Go share the controller's runs (:mod:`~gocode.routes.runs`).
"""
