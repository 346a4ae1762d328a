"""index.ingest.fetch over HTTPS against a real TLS server on 127.0.0.1 and a test certificate
authority: the checked address is connected to, and the certificate verified for the link's host."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fetch_server import HTML, Server, fetch_local, serving

from index.errors import FetchRefused

# --- HTTPS: connect to the checked address, verify the certificate against the host name -------


@dataclass(frozen=True)
class Certs:
    ca: Path
    cert: Path  # for "localhost" only, signed by `ca`
    key: Path


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command to make a test certificate authority")
    d = tmp_path_factory.mktemp("certs")
    ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"

    def run(command: str) -> None:
        subprocess.run([openssl, *command.split()], cwd=d, check=True, capture_output=True)

    run(
        f"req -x509 {ec} -keyout ca.key -out ca.pem -days 2 -subj /CN=articlebot-test-ca"
        " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
    )
    run(f"req {ec} -keyout leaf.key -out leaf.csr -subj /CN=localhost")
    (d / "leaf.ext").write_text(
        "subjectAltName=DNS:localhost\n"
        "basicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
    )
    run(
        "x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2"
        " -extfile leaf.ext"
    )
    return Certs(ca=d / "ca.pem", cert=d / "leaf.pem", key=d / "leaf.key")


@pytest.fixture
def tls_server(certs: Certs) -> Iterator[tuple[Server, list[str | None]]]:
    names: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs.cert, certs.key)

    def remember_name(_sock: ssl.SSLObject, name: str | None, _context: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = remember_name
    with serving(Server(tls=context)) as running:
        yield running, names


@pytest.fixture
def trust_test_ca(monkeypatch: pytest.MonkeyPatch, certs: Certs) -> None:
    # ssl.create_default_context() reads OpenSSL's default paths, which honour these variables.
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.ca))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.mark.slow  # another process
def test_https_sends_the_host_name_and_verifies_it(
    tls_server: tuple[Server, list[str | None]],
    trust_test_ca: None,
    connections: list[tuple[str, int]],
) -> None:
    server, names = tls_server
    page = fetch_local(server.url("/page", host="localhost", scheme="https"))
    assert page.body == HTML
    assert names == ["localhost"]  # SNI carried the name...
    assert connections[-1] == ("127.0.0.1", server.port)  # ...while the checked address was used


@pytest.mark.slow  # another process
def test_https_certificate_must_match_the_link(
    tls_server: tuple[Server, list[str | None]], trust_test_ca: None
) -> None:
    server, _names = tls_server
    with pytest.raises(FetchRefused) as refused:  # the certificate names localhost only
        fetch_local(server.url("/page", scheme="https"))
    assert str(refused.value) == (
        "The security certificate of 127.0.0.1 could not be verified; "
        "check the link or attach the article as a file."
    )
    assert server.seen.paths == []


@pytest.mark.slow  # another process
def test_https_certificate_must_come_from_a_trusted_authority(
    tls_server: tuple[Server, list[str | None]], monkeypatch: pytest.MonkeyPatch, certs: Certs
) -> None:
    server, _names = tls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.cert))  # trust something else than the CA
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(FetchRefused, match="security certificate of localhost"):
        fetch_local(server.url("/page", host="localhost", scheme="https"))
    assert server.seen.paths == []
