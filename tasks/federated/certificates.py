"""Per-run TLS certificates for a server the project starts on this machine (Flower's SuperLink): a fresh CA,
and a server certificate for 127.0.0.1 and localhost signed by it. The CA's private key is never written, so
nothing can sign another certificate that our clients would trust; the files are 0600 in a 0700 folder
(tasks/core/private.py), so another local account can read neither the key nor the CA."""
from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tasks.core.private import private_folder, replace_file

LIFETIME = datetime.timedelta(days=7)  # one deployment's life, with room for a long sweep


@dataclass(frozen=True)
class ServerCertificates:
    ca: Path  # what clients trust (Flower: --root-certificates, config.toml's root-certificates)
    cert: Path
    key: Path


def loopback_certificates(folder: Path) -> ServerCertificates:
    """A new CA and a server certificate (SAN IP 127.0.0.1, DNS localhost) as PEM files in `folder`."""
    ca_key, server_key = _new_key(), _new_key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "papers per-run CA")])
    ca = _sign(ca_name, ca_name, ca_key.public_key(), ca_key, _ca_extensions(ca_key.public_key()))
    server = _sign(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]), ca_name, server_key.public_key(),
                   ca_key, _server_extensions(server_key.public_key(), ca_key.public_key()))
    folder = private_folder(folder, tighten=True)
    files = ServerCertificates(folder / "ca.pem", folder / "server.pem", folder / "server.key")
    replace_file(files.ca, ca.public_bytes(serialization.Encoding.PEM))
    replace_file(files.cert, server.public_bytes(serialization.Encoding.PEM))
    replace_file(files.key, server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                     serialization.NoEncryption()))
    return files


def _new_key():
    return ec.generate_private_key(ec.SECP256R1())  # milliseconds, where RSA takes a noticeable fraction of a second


def _sign(subject, issuer, public_key, signing_key, extensions):
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(public_key)
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + LIFETIME))
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signing_key, hashes.SHA256())


def _ca_extensions(ca_public):
    return [(x509.BasicConstraints(ca=True, path_length=0), True),
            (_key_usage(key_cert_sign=True, crl_sign=True), True),
            (x509.SubjectKeyIdentifier.from_public_key(ca_public), False)]


def _server_extensions(server_public, ca_public):
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    return [(x509.BasicConstraints(ca=False, path_length=None), True),
            (_key_usage(digital_signature=True), True),
            (x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False),
            (x509.SubjectAlternativeName(names), False),
            (x509.SubjectKeyIdentifier.from_public_key(server_public), False),
            (x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_public), False)]


def _key_usage(**granted):
    usages = ("digital_signature", "content_commitment", "key_encipherment", "data_encipherment", "key_agreement",
              "key_cert_sign", "crl_sign", "encipher_only", "decipher_only")
    return x509.KeyUsage(**{usage: granted.get(usage, False) for usage in usages})
