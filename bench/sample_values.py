#!/usr/bin/env python3
"""Prints the value of each sample whose metric is given, from the JSON
objects a plugin CLI prints (protobuf's printer, several lines per object).

Usage: ... | sample_values.py METRIC [PARAM=VALUE ...]
"""
import json
import sys


def main():
    metric = sys.argv[1]
    want = dict(arg.split("=", 1) for arg in sys.argv[2:])
    text = sys.stdin.read()
    decoder = json.JSONDecoder()
    i = 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        sample, i = decoder.raw_decode(text, i)
        params = sample.get("params", {})
        if sample.get("metric") == metric and all(
                params.get(k) == v for k, v in want.items()):
            print(sample["value"])


if __name__ == "__main__":
    main()
