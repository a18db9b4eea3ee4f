#!/usr/bin/env bash
# Generate a throw-away test PKI with the openssl CLI (EC P-256, valid 2 days):
#
#   gen-test-ca.sh DIR
#
# DIR/ca.pem, ca.key             test CA
# DIR/server.pem, server.key     server cert (SAN IP:127.0.0.1, DNS:localhost), signed by the CA
# DIR/server-keystore.pem        server cert chain followed by its key (ssl.keystore.location)
# DIR/client.pem, client.key     client cert (CN=sftest-client, clientAuth), signed by the CA
# DIR/rogue-ca.pem, rogue-client.pem, rogue-client.key   a second CA and a client cert from it
set -euo pipefail

dir=${1:?usage: gen-test-ca.sh DIR}
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

ca() { # ca NAME CN
    key "$1.key"
    openssl req -x509 -new -key "$1.key" -sha256 -days 2 -subj "/O=StreamFlow test/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$1.pem"
}

leaf() { # leaf NAME CANAME CN EXTENSIONS
    key "$1.key"
    openssl req -new -key "$1.key" -subj "/O=StreamFlow test/CN=$3" -out "$1.csr"
    printf '%s\n' "$4" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -sha256 -days 2 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}

ca ca "StreamFlow test CA"
leaf server ca localhost "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
leaf client ca sftest-client "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
cat server.pem server.key >server-keystore.pem

ca rogue-ca "Rogue test CA"
leaf rogue-client rogue-ca sftest-rogue "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"

openssl verify -CAfile ca.pem server.pem client.pem >/dev/null
chmod 600 ./*.key server-keystore.pem
