"""The team's certificate authority: one CA per team folder, and a certificate and key per process that speaks TLS
(the Dask scheduler, each Dask worker, each member's Dask client). Dask checks both sides against the CA
(`distributed.security.Security`: CERT_REQUIRED for servers and clients), so only holders of a key the CA signed
reach the cluster, where a client runs any code it sends.

Keys are written 0600 through tasks/core/private.py into the caller's private folder; the CA's key never leaves it.
"""
from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from tasks.core.private import read_private, replace_file

VALID_DAYS = 365
CA_NAME = "papers team CA"


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _key_pem(key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _certificate(subject: str, public_key, issuer: str, signing_key, is_ca: bool, hosts: tuple[str, ...]):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(_now() - datetime.timedelta(minutes=5))
               .not_valid_after(_now() + datetime.timedelta(days=VALID_DAYS))
               .add_extension(x509.BasicConstraints(ca=is_ca, path_length=0 if is_ca else None), critical=True))
    if hosts:
        names = [x509.IPAddress(ipaddress.ip_address(h)) if h.replace(".", "").isdigit() else x509.DNSName(h) for h in hosts]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(signing_key, hashes.SHA256())


def ensure_ca(folder: Path) -> None:
    """ca.pem and ca.key in `folder` (private), made once."""
    if (folder / "ca.pem").exists():
        return
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    certificate = _certificate(CA_NAME, key.public_key(), CA_NAME, key, True, ())
    replace_file(folder / "ca.key", _key_pem(key))
    replace_file(folder / "ca.pem", certificate.public_bytes(serialization.Encoding.PEM))


def issue(ca_folder: Path, out: Path, name: str, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> tuple[Path, Path]:
    """(certificate, key) for process `name`, signed by the CA in `ca_folder`, written into `out` (private) once."""
    certificate_path, key_path = out / f"{name}.pem", out / f"{name}.key"
    if certificate_path.exists() and key_path.exists():
        return certificate_path, key_path
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    ca_key = serialization.load_pem_private_key(read_private(ca_folder / "ca.key"), password=None)
    ca_certificate = x509.load_pem_x509_certificate((ca_folder / "ca.pem").read_bytes())
    issuer = ca_certificate.subject.rfc4514_string().removeprefix("CN=")
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = _certificate(name, key.public_key(), issuer, ca_key, False, hosts)
    replace_file(key_path, _key_pem(key))
    replace_file(certificate_path, certificate.public_bytes(serialization.Encoding.PEM))
    return certificate_path, key_path
