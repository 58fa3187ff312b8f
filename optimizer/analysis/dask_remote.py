"""An external Dask scheduler: its address, the client's TLS files, and the connection.

``--scheduler ADDRESS`` (batch, hedge, replan, alternatives) connects to an existing
cluster. Its address is checked before anything is loaded (:func:`check_scheduler_address`),
and a connection that Dask cannot make for want of TLS material is an ``OSError`` that
says which files to give (:func:`connect`), not Dask's ``TypeError`` about an SSL context.
The security comes from the usual Dask configuration (``distributed.comm.tls.*`` in a Dask
config file or the ``DASK_DISTRIBUTED__COMM__TLS__...`` environment variables) or from
:class:`TlsFiles` (``--tls-ca-file``, ``--tls-cert``, ``--tls-key``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

__all__ = ["TlsFiles", "check_scheduler_address", "connect"]


@dataclass(frozen=True)
class TlsFiles:
    """TLS files of a client of an external, secured Dask scheduler.

    Parameters
    ----------
    ca_file : str
        Certificate authority that signed the scheduler's certificate.
    cert, key : str, optional
        This client's certificate and private key (the key may be inside ``cert``).
    """

    ca_file: str
    cert: str | None = None
    key: str | None = None

    def security(self) -> Any:
        """Return the ``distributed.security.Security`` of these files (TLS required)."""
        from distributed.security import Security

        return Security(
            tls_ca_file=self.ca_file,
            tls_client_cert=self.cert,
            tls_client_key=self.key,
            require_encryption=True,
        )


def check_scheduler_address(address: str, inproc: bool = True) -> str:
    """Return ``address`` if it is a Dask scheduler's ``[scheme://]host:port``.

    Parameters
    ----------
    address : str
        For example ``tcp://127.0.0.1:8786`` or ``tls://scheduler.example:8786``.
    inproc : bool
        Whether ``inproc://`` (a scheduler in this process, as tests start) counts; no
        other process can reach one, so the command line says False.

    Raises
    ------
    ValueError
        For anything else: a scheme Dask lacks, no host or port, a port beyond 65535,
        naming the address and the form expected.
    """
    from distributed.comm import addressing, registry

    scheme, loc = addressing.parse_address(address, strict=False)
    known = sorted(set(registry.backends) - {"inproc"})
    ok = [*known, "inproc"] if inproc else known
    with contextlib.suppress(TypeError, ValueError):
        host, port = (loc, 1) if scheme == "inproc" else addressing.parse_host_port(loc)
        if scheme in ok and host and 0 < int(port) < 65536:
            return address
    raise ValueError(
        f"{address!r} is not a Dask scheduler address: give scheme://host:port "
        f"(scheme one of {', '.join(known)}; e.g. tcp://127.0.0.1:8786)"
    )


def connect(address: str, tls: TlsFiles | None, timeout: str = "20s") -> Any:
    """Return a ``distributed.Client`` connected to the scheduler at ``address``.

    Parameters
    ----------
    address : str
        The scheduler (checked by :func:`check_scheduler_address`).
    tls : TlsFiles, optional
        The client's TLS files (None: the Dask configuration's).
    timeout : str
        How long to try to connect (a Dask duration).

    Raises
    ------
    ValueError
        For an address that is not one.
    OSError
        When the scheduler cannot be reached, or speaks TLS and this client has no
        certificate (Dask raises ``TypeError`` there: "TLS expects a `ssl_context`").
    TimeoutError
        When the connection takes longer than ``timeout``.
    """
    from distributed import Client

    check_scheduler_address(address)
    security = tls.security() if tls is not None else None
    try:
        return Client(address, timeout=timeout, security=security)
    except TypeError as e:
        if "ssl_context" not in str(e):
            raise
        raise OSError(
            f"the scheduler {address} speaks TLS and this client has no certificate: "
            "give --tls-ca-file, --tls-cert and --tls-key (capacity batch), or set "
            "distributed.comm.tls.ca-file and distributed.comm.tls.client.cert/key in "
            "the Dask configuration"
        ) from None
