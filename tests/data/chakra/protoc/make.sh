#!/bin/sh
# Chakra traces written by Google's protobuf encoder (protoc --encode), not
# baton's: rankN.txt (text format; messages separated by ---) become
# foreign.N.et, each message length-prefixed as Chakra's protolib.py
# encodeMessage writes it. et_def.proto is mlcommons/chakra's
# schema/protobuf/et_def.proto at 21585d8f2d65603d791d2121e3d4632351120262.
# Needs protoc (apt-get install protobuf-compiler) and python3; run from
# this folder. tests/test_replay.c reads the .et files, never this script.
set -e
for r in 0 1; do
  python3 - "$r" <<'PY'
import subprocess, sys
r = sys.argv[1]
parts = open(f"rank{r}.txt").read().split("---\n")
out = b""
for i, text in enumerate(parts):
    kind = "ChakraProtoMsg.GlobalMetadata" if i == 0 else "ChakraProtoMsg.Node"
    msg = subprocess.run(["protoc", "--proto_path=.", f"--encode={kind}", "et_def.proto"],
                         input=text.encode(), capture_output=True, check=True).stdout
    n, v = len(msg), b""
    while True:
        b = n & 0x7F
        n >>= 7
        v += bytes([b | (0x80 if n else 0)])
        if not n:
            break
    out += v + msg
open(f"foreign.{r}.et", "wb").write(out)
PY
done
