"""Admission: the rules where objects are admitted.

``review``: an AdmissionReview judged by the same engine, config and profile
as ``kubelint-ml check``; ``app``: the ASGI application (routes, limits,
metrics, logs); ``server``: running it over HTTPS with reloads and graceful
shutdown; ``vap``: ValidatingAdmissionPolicy export; ``cli``: the ``serve``
and ``export`` commands.
"""
