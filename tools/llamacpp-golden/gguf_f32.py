# Writes a GGUF file (version 3) of F32 tensors, for the test-file generators here (no gguf-py):
# kv maps a key to (type, value), the type a GGUF value type id; an array's value is
# (element type, items). tensors: (name, ne, values) with ne in ggml's order.
import struct

F32_TENSOR = 0
STRING, ARRAY = 8, 9
SCALAR = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}


def _string(s):
    b = s.encode()
    return struct.pack('<Q', len(b)) + b


def _value(t, v):
    if t == STRING:
        return _string(v)
    if t == ARRAY:
        et, items = v
        return struct.pack('<IQ', et, len(items)) + b''.join(_value(et, x) for x in items)
    return struct.pack('<' + SCALAR[t], v)


def write_gguf(path, kv, tensors):
    out = bytearray(b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(kv)))
    for k, (t, v) in kv.items():
        out += _string(k) + struct.pack('<I', t) + _value(t, v)
    offset, blobs = 0, []
    for name, ne, values in tensors:
        out += _string(name) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', n) for n in ne)
        out += struct.pack('<IQ', F32_TENSOR, offset)
        blob = struct.pack('<%df' % len(values), *values)
        blob += b'\0' * (-len(blob) % 32)
        blobs.append(blob)
        offset += len(blob)
    out += b'\0' * (-len(out) % 32)
    for b in blobs:
        out += b
    open(path, 'wb').write(out)
