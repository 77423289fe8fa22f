"""Reads a Sluice shard set (format version 1, specified in shards.md) with numpy alone.

read(path) returns {field name: [row, ...]} in row order. A value is None (null), an ndarray (a
fixed-shape value), bytes (a string or blob) or a list of values (a -1 dimension, recursively).
check=True also checks the CRC32C of every block.
"""
import json, os, struct
import numpy as np

DTYPES = {'bool': '?', 'int8': 'i1', 'int16': '<i2', 'int32': '<i4', 'int64': '<i8', 'uint8': 'u1',
          'uint16': '<u2', 'uint32': '<u4', 'uint64': '<u8', 'float16': '<f2', 'bfloat16': '<V2',
          'float32': '<f4', 'float64': '<f8', 'complex64': '<c8', 'complex128': '<c16'}
TABLE = []
for i in range(256):
    for _ in range(8):
        i = (i >> 1) ^ (0x82F63B78 if i & 1 else 0)
    TABLE.append(i)

def crc32c(data):  # CRC-32C (Castagnoli), as java.util.zip.CRC32C
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def read_shard(path, info, fields, check=False):
    m = np.fromfile(path, dtype=np.uint8)
    magic, version, nblocks, rows, footer, length = struct.unpack_from('<8sIIQQQ', m, 0)
    assert magic == b'SLUICESH' and version == 1 and crc32c(m[:60]) == struct.unpack_from('<I', m, 60)[0]
    assert length == len(m) == info['bytes'] and rows == info['rows'], path + ': truncated, extended or not ours'
    checksum = crc32c(m[footer:length - 8])
    assert bytes(m[-4:]) == b'SHRD' and struct.unpack_from('<I', m, length - 8)[0] == checksum
    assert info['checksum'] == 'crc32c:%08x' % checksum, path + ': checksum mismatch'
    blocks = iter([struct.unpack_from('<QQI', m, footer + 24 * i) for i in range(nblocks)])
    def block(dtype):
        offset, size, crc = next(blocks)
        assert not check or crc32c(m[offset:offset + size]) == crc, path + ': block checksum mismatch'
        return m[offset:offset + size].view(dtype)
    out = {}
    for f in fields:
        shape, binary = f['shape'], f['dtype'] in ('string', 'bytes')
        k = next((i for i, d in enumerate(shape) if d != -1), len(shape))  # ragged levels
        nullable = [f['nullable']] + f.get('nullable_elements', [])
        valid, offsets, counts = [], [], [rows]
        for d in range(k + 1):  # per depth: validity if nullable, offsets of lists or strings
            valid.append(block('?') if nullable[d] else None)
            if d < k + binary:
                offsets.append(block('<i8'))
                counts.append(int(offsets[d][counts[d]]))
        values = block('u1') if binary else block(DTYPES[f['dtype']]).reshape([counts[k]] + shape[k:])
        def item(d, i):  # item i at depth d: None, a list, bytes or an ndarray
            if valid[d] is not None and not valid[d][i]:
                return None
            if d < k:
                return [item(d + 1, j) for j in range(offsets[d][i], offsets[d][i + 1])]
            return bytes(values[offsets[d][i]:offsets[d][i + 1]]) if binary else values[i]
        out[f['name']] = [item(0, r) for r in range(rows)]
    return out

def read(path, check=False):
    meta = json.load(open(os.path.join(path, 'metadata.json')))
    assert meta['format'] == 'sluice-shards' and meta['version'] == 1
    columns = {f['name']: [] for f in meta['fields']}
    for info in meta['shards']:
        for name, rows in read_shard(os.path.join(path, info['file']), info, meta['fields'], check).items():
            columns[name] += rows
    return columns
