"""The sentence a sandbox refusal adds to the error user code sees."""
import socket

import pytest

from rlm_harness import refusals


def refused(family, monkeypatch):
    """The PermissionError socket.socket(family) raises where the sandbox's filter refuses socket() with EACCES."""
    def init(self, family=-1, type=-1, proto=-1, fileno=None):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(socket.socket, "__init__", init)
    with pytest.raises(PermissionError) as raised:
        socket.socket(family, socket.SOCK_STREAM)
    return raised.value


def test_a_refused_unix_socket_says_unix_sockets_are_not_available(monkeypatch):
    assert refusals.note(refused(socket.AF_UNIX, monkeypatch)) == refusals.UNIX_SOCKETS
    assert "not available in the rlm-mcp sandbox" in refusals.UNIX_SOCKETS


def test_other_refusals_get_no_note(monkeypatch):
    assert refusals.note(refused(socket.AF_INET, monkeypatch)) is None
    assert refusals.note(PermissionError(13, "Permission denied")) is None
    assert refusals.note(ValueError("x")) is None
