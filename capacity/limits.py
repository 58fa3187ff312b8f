"""Size limits on input the product accepts from people it does not control.

One place for each limit, so the app's message, the Streamlit server's setting
(``server.maxUploadSize``) and the checks agree.
"""

from __future__ import annotations

MAX_UPLOAD_MB = 50
"""Largest accepted upload, per file and for a zip's unpacked contents (MiB).

The app checks it on the bytes it reads, and ``capacity app`` starts Streamlit with
``--server.maxUploadSize`` set to it, so the server itself refuses larger requests.
"""

MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
""":data:`MAX_UPLOAD_MB` in bytes."""
