#!/usr/bin/env bash
# Regenerates the certificate fixtures of ContractTests with the openssl CLI (P-256, ~100-year validity).
# The outputs are committed; run this only to change them:  Tests/ContractTests/Fixtures/make-fixtures.sh
#
#   root.der / root.pem                  self-signed root CA
#   intermediate.der / .pem              CA issued by root
#   leaf.der / .pem                      end entity issued by intermediate     -> valid chain: leaf, intermediate
#   other-intermediate.der               second CA issued by root
#   other-leaf.der                       end entity issued by other-intermediate -> wrong issuer when paired with intermediate
#   self-signed-ca.der                   a self-signed CA used as "intermediate"
#   self-signed-leaf.der                 end entity issued by self-signed-ca
#   impostor-leaf.der                    names intermediate as issuer, no key identifiers, signed by another key
#                                        -> issuer check passes, signature check fails
#   garbage.der                          random bytes, not DER
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
days=36500

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/$1.key" 2>/dev/null; }

cat > "$work/ca.ext" <<'EXT'
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EXT
cat > "$work/leaf.ext" <<'EXT'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyAgreement
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EXT
cat > "$work/bare-leaf.ext" <<'EXT'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyAgreement
subjectKeyIdentifier = none
authorityKeyIdentifier = none
EXT

# issue NAME SUBJECT ISSUER_NAME EXTFILE
issue() {
  key "$1"
  openssl req -new -key "$work/$1.key" -subj "$2" -out "$work/$1.csr"
  openssl x509 -req -in "$work/$1.csr" -CA "$work/$3.pem" -CAkey "$work/$3.key" -set_serial "0x$(openssl rand -hex 8)" \
    -days "$days" -sha256 -extfile "$work/$4" -out "$work/$1.pem" 2>/dev/null
}

key root
openssl req -new -x509 -key "$work/root.key" -subj "/O=Provisioner Test/CN=Test Root CA" -days "$days" -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$work/root.pem"
issue intermediate "/O=Provisioner Test/CN=Test Intermediate CA" root ca.ext
issue leaf "/O=Provisioner Test/CN=Test PassKit Leaf" intermediate leaf.ext
issue other-intermediate "/O=Provisioner Test/CN=Other Intermediate CA" root ca.ext
issue other-leaf "/O=Provisioner Test/CN=Other Leaf" other-intermediate leaf.ext

key self-signed-ca
openssl req -new -x509 -key "$work/self-signed-ca.key" -subj "/O=Provisioner Test/CN=Self-Signed CA" -days "$days" -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$work/self-signed-ca.pem"
issue self-signed-leaf "/O=Provisioner Test/CN=Leaf Under Self-Signed CA" self-signed-ca leaf.ext

# The impostor signs with its own key under the real intermediate's name, without key identifiers.
key impostor
openssl req -new -x509 -key "$work/impostor.key" -subj "/O=Provisioner Test/CN=Test Intermediate CA" -days "$days" -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -addext "subjectKeyIdentifier=none" -out "$work/impostor.pem"
issue impostor-leaf "/O=Provisioner Test/CN=Impostor Leaf" impostor bare-leaf.ext

for name in root intermediate leaf; do cp "$work/$name.pem" "$name.pem"; done
for name in root intermediate leaf other-intermediate other-leaf self-signed-ca self-signed-leaf impostor-leaf; do
  openssl x509 -in "$work/$name.pem" -outform DER -out "$name.der"
done
openssl rand 600 > garbage.der

openssl verify -CAfile root.pem -untrusted intermediate.pem leaf.pem >/dev/null
echo "fixtures written to $(pwd)"
