/**
 * Finding where msgpack elements end without decoding them, so a restore can hand a packed
 * key group's values to the on-disk store as they are (the store keeps every value packed by
 * the same packer) instead of decoding and packing each again.
 *
 * Only what stands alone is scanned: msgpackr's records (a structure defined once and
 * referenced by later values) and its extensions that take the next element (Set, Error,
 * RegExp) make the scan give up (-1), and the caller decodes the group the ordinary way.
 */

/** Extension types whose bytes are the whole value: undefined (0), timestamp (-1), typed arrays ('t'), big integers ('B'). */
function standsAlone(type: number): boolean {
  return type === 0x00 || type === 0xff || type === 0x74 || type === 0x42;
}

/** Where the element starting at `pos` ends (exclusive), or -1 when it does not stand alone or is cut off. */
export function msgpackElementEnd(b: Uint8Array, pos: number): number {
  let remaining = 1;
  const u16 = (at: number): number => (b[at]! << 8) | b[at + 1]!;
  const u32 = (at: number): number => b[at]! * 0x1000000 + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
  while (remaining > 0) {
    if (pos >= b.length) return -1;
    const t = b[pos]!;
    remaining--;
    if (t < 0x40) pos += 1; // positive fixint
    else if (t < 0x80) return -1; // a record reference (msgpackr with records)
    else if (t < 0x90) {
      remaining += 2 * (t & 0x0f);
      pos += 1;
    } else if (t < 0xa0) {
      remaining += t & 0x0f;
      pos += 1;
    } else if (t < 0xc0) pos += 1 + (t & 0x1f);
    else if (t >= 0xe0) pos += 1; // negative fixint
    else {
      switch (t) {
        case 0xc0:
        case 0xc2:
        case 0xc3:
          pos += 1;
          break;
        case 0xc4:
        case 0xd9:
          pos += 2 + b[pos + 1]!;
          break;
        case 0xc5:
        case 0xda:
          pos += 3 + u16(pos + 1);
          break;
        case 0xc6:
        case 0xdb:
          pos += 5 + u32(pos + 1);
          break;
        case 0xc7:
          if (!standsAlone(b[pos + 2]!)) return -1;
          pos += 3 + b[pos + 1]!;
          break;
        case 0xc8:
          if (!standsAlone(b[pos + 3]!)) return -1;
          pos += 4 + u16(pos + 1);
          break;
        case 0xc9:
          if (!standsAlone(b[pos + 5]!)) return -1;
          pos += 6 + u32(pos + 1);
          break;
        case 0xca:
        case 0xce:
        case 0xd2:
          pos += 5;
          break;
        case 0xcb:
        case 0xcf:
        case 0xd3:
          pos += 9;
          break;
        case 0xcc:
        case 0xd0:
          pos += 2;
          break;
        case 0xcd:
        case 0xd1:
          pos += 3;
          break;
        case 0xd4:
        case 0xd5:
        case 0xd6:
        case 0xd7:
        case 0xd8:
          if (!standsAlone(b[pos + 1]!)) return -1;
          pos += 2 + (1 << (t - 0xd4));
          break;
        case 0xdc:
          remaining += u16(pos + 1);
          pos += 3;
          break;
        case 0xdd:
          remaining += u32(pos + 1);
          pos += 5;
          break;
        case 0xde:
          remaining += 2 * u16(pos + 1);
          pos += 3;
          break;
        case 0xdf:
          remaining += 2 * u32(pos + 1);
          pos += 5;
          break;
        default:
          return -1; // 0xc1 is never used
      }
    }
  }
  return pos <= b.length ? pos : -1;
}

/** The number of entries of the map whose header starts at `pos` and where they start, or undefined when no map starts there. */
export function msgpackMapHeader(b: Uint8Array, pos: number): { readonly size: number; readonly start: number } | undefined {
  return containerHeader(b, pos, 0x80, 0xde);
}

/** The number of elements of the array whose header starts at `pos` and where they start, or undefined when no array starts there. */
export function msgpackArrayHeader(b: Uint8Array, pos: number): { readonly size: number; readonly start: number } | undefined {
  return containerHeader(b, pos, 0x90, 0xdc);
}

/** A map or array header: fix form `fix | n` (n < 16), then 16-bit `code16` and 32-bit `code16 + 1`. */
function containerHeader(b: Uint8Array, pos: number, fix: number, code16: number): { readonly size: number; readonly start: number } | undefined {
  const t = b[pos];
  if (t === undefined) return undefined;
  if (t >= fix && t < fix + 0x10) return { size: t & 0x0f, start: pos + 1 };
  if (t === code16 && pos + 3 <= b.length) return { size: (b[pos + 1]! << 8) | b[pos + 2]!, start: pos + 3 };
  if (t === code16 + 1 && pos + 5 <= b.length) return { size: b[pos + 1]! * 0x1000000 + ((b[pos + 2]! << 16) | (b[pos + 3]! << 8) | b[pos + 4]!), start: pos + 5 };
  return undefined;
}

/** The number encoded at `pos` when it is an integer of up to 32 bits or a float64, else undefined (decode it the ordinary way). */
export function msgpackNumberAt(b: Uint8Array, pos: number): number | undefined {
  const t = b[pos];
  if (t === undefined) return undefined;
  if (t < 0x80) return t < 0x40 ? t : undefined; // 0x40-0x7f are record references
  if (t >= 0xe0) return t - 0x100;
  switch (t) {
    case 0xcc:
      return b[pos + 1];
    case 0xcd:
      return (b[pos + 1]! << 8) | b[pos + 2]!;
    case 0xce:
      return b[pos + 1]! * 0x1000000 + ((b[pos + 2]! << 16) | (b[pos + 3]! << 8) | b[pos + 4]!);
    case 0xd0:
      return (b[pos + 1]! << 24) >> 24;
    case 0xd1:
      return (((b[pos + 1]! << 8) | b[pos + 2]!) << 16) >> 16;
    case 0xd2:
      return (b[pos + 1]! << 24) | (b[pos + 2]! << 16) | (b[pos + 3]! << 8) | b[pos + 4]!;
    case 0xcb:
      return pos + 9 <= b.length ? new DataView(b.buffer, b.byteOffset + pos + 1, 8).getFloat64(0) : undefined;
    default:
      return undefined;
  }
}
