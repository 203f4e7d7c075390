"""Makes the certificates the TLS tests use, at test time, into a directory: nothing that expires
is committed.

    python scripts/tls_certs.py DIR

Writes, as PEM:
  ca.pem                 the test certificate authority ("Courier Test CA"), valid for 30 days
  server.pem/.key        127.0.0.1, ::1 and localhost, issued by the test CA
  expired.pem/.key       the same names, issued by the test CA, expired yesterday
  future.pem/.key        the same names, issued by the test CA, valid from tomorrow
  wronghost.pem/.key     issued by the test CA for wrong-host.test only
  unknown.pem/.key       the right names, issued by another CA nobody trusts
  client.pem/.key        a client certificate (mTLS), issued by the test CA
  other-client.pem/.key  a client certificate issued by the untrusted CA
  spki.txt               the base64 SHA-256 of server.pem's public key (for pinning tests)
  chain-root.pem         a root of its own, which issued an intermediate, which issued
  chained.pem/.key       a leaf for 127.0.0.1, ::1 and localhost (the file: leaf, intermediate)
  smuggled.pem/.key      the same, with the untrusted CA's certificate appended (it verifies
                         nothing: a pin on its key must not match)
  spki-chain-root.txt, spki-intermediate.txt, spki-chained.txt, spki-other-ca.txt
                         the pins of the chain's root, intermediate and leaf, and of the untrusted CA

Keys are ECDSA P-256: quick to make, accepted by OpenSSL, BoringSSL and libcurl alike.
"""

import base64
import datetime
import hashlib
import ipaddress
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def key():
    return ec.generate_private_key(ec.SECP256R1())


def name(common):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Courier tests")])


def authority(common, now, path_length=0, issuer=None):
    """A CA certificate: self-signed, or issued by `issuer` (its key and certificate)."""
    private = key()
    issuer_key, issuer_name = (issuer[0], issuer[1].subject) if issuer else (private, name(common))
    builder = (
        x509.CertificateBuilder()
        .subject_name(name(common))
        .issuer_name(issuer_name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False, decipher_only=False),
            critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(private.public_key()), critical=False)
    )
    if issuer:
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    return private, builder.sign(issuer_key, hashes.SHA256())


def spki_pin(certificate):
    """The base64 SHA-256 of the certificate's SubjectPublicKeyInfo, as a pin is written."""
    spki = certificate.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode()


def leaf(issuer_key, issuer, common, names, now, start, end, client=False):
    private = key()
    alternative = []
    for entry in names:
        try:
            alternative.append(x509.IPAddress(ipaddress.ip_address(entry)))
        except ValueError:
            alternative.append(x509.DNSName(entry))
    builder = (
        x509.CertificateBuilder()
        .subject_name(name(common))
        .issuer_name(issuer.subject)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now + start)
        .not_valid_after(now + end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    )
    if alternative:
        builder = builder.add_extension(x509.SubjectAlternativeName(alternative), critical=False)
    return private, builder.sign(issuer_key, hashes.SHA256())


def write(directory, stem, private, certificate):
    with open(os.path.join(directory, stem + ".pem"), "wb") as f:
        f.write(certificate.public_bytes(serialization.Encoding.PEM))
    if private is not None:
        path = os.path.join(directory, stem + ".key")
        with open(path, "wb") as f:
            f.write(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        os.chmod(path, 0o600)


def main():
    directory = sys.argv[1]
    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    day = datetime.timedelta(days=1)
    ca_key, ca = authority("Courier Test CA", now)
    other_key, other = authority("Untrusted Test CA", now)
    write(directory, "ca", None, ca)
    here = ["127.0.0.1", "::1", "localhost"]
    write(directory, "server", *leaf(ca_key, ca, "localhost", here, now, -day, 30 * day))
    write(directory, "expired", *leaf(ca_key, ca, "localhost", here, now, -30 * day, -day))
    write(directory, "future", *leaf(ca_key, ca, "localhost", here, now, day, 30 * day))
    write(directory, "wronghost", *leaf(ca_key, ca, "wrong-host.test", ["wrong-host.test"], now, -day, 30 * day))
    write(directory, "unknown", *leaf(other_key, other, "localhost", here, now, -day, 30 * day))
    write(directory, "client", *leaf(ca_key, ca, "Courier test client", [], now, -day, 30 * day, client=True))
    write(directory, "other-client", *leaf(other_key, other, "Untrusted test client", [], now, -day, 30 * day, client=True))
    with open(os.path.join(directory, "server.pem"), "rb") as f:
        server = x509.load_pem_x509_certificate(f.read())
    with open(os.path.join(directory, "spki.txt"), "w") as f:
        f.write(spki_pin(server) + "\n")
    # A chain of three for pins on an intermediate or root key: a root of its own (trusted alone by
    # the tests that use it), an intermediate, a leaf. chained.pem is the leaf and the intermediate;
    # smuggled.pem adds the untrusted CA's certificate, which verifies nothing: a pin on its key
    # must not match (only the chain the TLS library verified counts).
    root_key, root = authority("Courier Test Chain Root", now, path_length=1)
    middle_key, middle = authority("Courier Test Intermediate", now, path_length=0, issuer=(root_key, root))
    chained_key, chained = leaf(middle_key, middle, "localhost", here, now, -day, 30 * day)
    write(directory, "chain-root", None, root)
    write(directory, "chained", chained_key, chained)
    pem = serialization.Encoding.PEM
    with open(os.path.join(directory, "chained.pem"), "wb") as f:
        f.write(chained.public_bytes(pem) + middle.public_bytes(pem))
    write(directory, "smuggled", chained_key, chained)
    with open(os.path.join(directory, "smuggled.pem"), "wb") as f:
        f.write(chained.public_bytes(pem) + middle.public_bytes(pem) + other.public_bytes(pem))
    for stem, certificate in [("spki-chain-root", root), ("spki-intermediate", middle), ("spki-chained", chained), ("spki-other-ca", other)]:
        with open(os.path.join(directory, stem + ".txt"), "w") as f:
            f.write(spki_pin(certificate) + "\n")


if __name__ == "__main__":
    main()
