//! The Chakra execution-trace file (MLCommons Chakra's `et_def.proto`, the format ASTRA-sim
//! runs): records one after another, each a varint byte length then a protobuf message; the
//! first a `GlobalMetadata` (field 1: the schema version), then one `Node` per operation.
//! Decoded and encoded here by hand, from the documented field numbers and protobuf's wire
//! format (varints, little-endian fixed widths, length-delimited fields), keeping what a
//! network simulation needs: a node's id (1), name (2), type (3), control and data
//! dependencies (4, 5), duration (7) and attributes (10: a name (1) and one value, integers in
//! fields 7–25, a double (3), a float (5), a bool (27) or a string (29)).

/// Node types (`NodeType`).
pub const METADATA_NODE: u32 = 1;
/// A memory load.
pub const MEM_LOAD_NODE: u32 = 2;
/// A memory store.
pub const MEM_STORE_NODE: u32 = 3;
/// A compute kernel.
pub const COMP_NODE: u32 = 4;
/// A point-to-point send.
pub const COMM_SEND_NODE: u32 = 5;
/// A point-to-point receive.
pub const COMM_RECV_NODE: u32 = 6;
/// A collective.
pub const COMM_COLL_NODE: u32 = 7;

/// Collective types (`CollectiveCommType`), as the `comm_type` attribute gives them.
pub const ALL_REDUCE: i64 = 0;
/// See [`ALL_REDUCE`].
pub const ALL_GATHER: i64 = 2;
/// See [`ALL_REDUCE`].
pub const BROADCAST: i64 = 5;
/// See [`ALL_REDUCE`].
pub const ALL_TO_ALL: i64 = 6;
/// See [`ALL_REDUCE`].
pub const REDUCE_SCATTER: i64 = 7;
/// See [`ALL_REDUCE`].
pub const REDUCE_SCATTER_BLOCK: i64 = 8;
/// See [`ALL_REDUCE`].
pub const BARRIER: i64 = 9;

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Any integer field (signed, unsigned, zigzag or fixed width).
    Int(i128),
    /// A double or float.
    Float(f64),
    /// A bool.
    Bool(bool),
    /// A string.
    Text(String),
    /// A list or bytes: kept as present, not read.
    Other,
}

/// One operation of a rank's trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// Its id, unique within the trace.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its type ([`COMP_NODE`], ...).
    pub kind: u32,
    /// Nodes it waits for, in order (control dependencies).
    pub ctrl_deps: Vec<u64>,
    /// Nodes it waits for (data dependencies).
    pub data_deps: Vec<u64>,
    /// Its recorded duration, µs.
    pub duration_micros: u64,
    /// Its attributes, in order.
    pub attrs: Vec<(String, Value)>,
}

impl Node {
    /// The value of attribute `name`, if present.
    pub fn attr(&self, name: &str) -> Option<&Value> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Attribute `name` as an integer: `None` if absent, `Err` naming what it is if it is no
    /// integer (a bool counts as 0 or 1).
    pub fn int(&self, name: &str) -> Result<Option<i128>, String> {
        match self.attr(name) {
            None => Ok(None),
            Some(Value::Int(x)) => Ok(Some(*x)),
            Some(Value::Bool(b)) => Ok(Some(*b as i128)),
            Some(other) => Err(format!("attribute `{name}` is {other:?}, not an integer")),
        }
    }

    /// Attribute `name` as text (an integer written out, as process-group names often are).
    pub fn text(&self, name: &str) -> Option<String> {
        match self.attr(name)? {
            Value::Text(s) => Some(s.clone()),
            Value::Int(x) => Some(x.to_string()),
            _ => None,
        }
    }

    /// Its dependencies, control then data.
    pub fn deps(&self) -> impl Iterator<Item = u64> + '_ {
        self.ctrl_deps.iter().chain(&self.data_deps).copied()
    }
}

/// A rank's trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// The schema version its metadata gives.
    pub version: String,
    /// Its nodes, in file order.
    pub nodes: Vec<Node>,
}

/// Reads protobuf's wire format from a byte slice, naming offsets from the start of the file.
struct Wire<'a> {
    b: &'a [u8],
    pos: usize,
    /// Offset of `b` in the file.
    base: usize,
}

impl<'a> Wire<'a> {
    fn at(&self) -> usize {
        self.base + self.pos
    }

    fn done(&self) -> bool {
        self.pos >= self.b.len()
    }

    fn varint(&mut self) -> Result<u64, String> {
        let start = self.at();
        let mut v = 0u64;
        for i in 0..10 {
            let Some(&byte) = self.b.get(self.pos) else { return Err(format!("truncated at byte {}: a varint begun at byte {start} runs past the end", self.at())) };
            self.pos += 1;
            if i == 9 && byte > 1 {
                return Err(format!("a varint at byte {start} exceeds 64 bits"));
            }
            v |= ((byte & 0x7f) as u64) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("a varint at byte {start} is longer than 10 bytes"))
    }

    fn take(&mut self, n: u64) -> Result<Wire<'a>, String> {
        let left = (self.b.len() - self.pos) as u64;
        if n > left {
            return Err(format!("truncated at byte {}: a field of {n} bytes, {left} left", self.at()));
        }
        let part = Wire { b: &self.b[self.pos..self.pos + n as usize], pos: 0, base: self.at() };
        self.pos += n as usize;
        Ok(part)
    }

    fn fixed(&mut self, n: u64) -> Result<u64, String> {
        let w = self.take(n)?;
        Ok(w.b.iter().rev().fold(0u64, |acc, &x| acc << 8 | x as u64))
    }

    /// The next field's number and wire type.
    fn key(&mut self) -> Result<(u64, u8), String> {
        let at = self.at();
        let k = self.varint()?;
        let (field, wire) = (k >> 3, (k & 7) as u8);
        if field == 0 || wire > 5 || wire == 3 || wire == 4 {
            return Err(format!("byte {at}: field {field} of wire type {wire}: not a field this format has (a corrupt or non-Chakra file?)"));
        }
        Ok((field, wire))
    }

    fn skip(&mut self, wire: u8) -> Result<(), String> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.take(8).map(|_| ()),
            2 => {
                let n = self.varint()?;
                self.take(n).map(|_| ())
            }
            _ => self.take(4).map(|_| ()),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let n = self.varint()?;
        let at = self.at();
        let w = self.take(n)?;
        String::from_utf8(w.b.to_vec()).map_err(|_| format!("byte {at}: a string that is not UTF-8"))
    }

    /// A repeated unsigned field, packed (wire type 2) or one value (wire type 0).
    fn repeated(&mut self, wire: u8, out: &mut Vec<u64>) -> Result<(), String> {
        if wire == 0 {
            out.push(self.varint()?);
            return Ok(());
        }
        let n = self.varint()?;
        let mut w = self.take(n)?;
        while !w.done() {
            out.push(w.varint()?);
        }
        Ok(())
    }
}

fn expect(field: &str, wire: u8, want: u8, at: usize) -> Result<(), String> {
    if wire != want {
        return Err(format!("byte {at}: {field} has wire type {wire}, the format's is {want}"));
    }
    Ok(())
}

fn attribute(mut w: Wire) -> Result<(String, Value), String> {
    let (mut name, mut value) = (String::new(), Value::Other);
    while !w.done() {
        let at = w.at();
        let (field, wire) = w.key()?;
        let zigzag = |v: u64| ((v >> 1) as i64 ^ -((v & 1) as i64)) as i128;
        value = match (field, wire) {
            (1, 2) => {
                name = w.string()?;
                continue;
            }
            (3, 1) => Value::Float(f64::from_bits(w.fixed(8)?)),
            (5, 5) => Value::Float(f32::from_bits(w.fixed(4)? as u32) as f64),
            // int32 and int64 (negative values as 64-bit two's complement), uint32, uint64.
            (7 | 9, 0) => Value::Int(w.varint()? as i64 as i128),
            (11 | 13, 0) => Value::Int(w.varint()? as i128),
            (15 | 17, 0) => Value::Int(zigzag(w.varint()?)),
            (19, 5) => Value::Int(w.fixed(4)? as i128),
            (21, 1) => Value::Int(w.fixed(8)? as i128),
            (23, 5) => Value::Int(w.fixed(4)? as u32 as i32 as i128),
            (25, 1) => Value::Int(w.fixed(8)? as i64 as i128),
            (27, 0) => Value::Bool(w.varint()? != 0),
            (29, 2) => Value::Text(w.string()?),
            (3 | 5 | 7 | 9 | 11 | 13 | 15 | 17 | 19 | 21 | 23 | 25 | 27 | 29, _) => return Err(format!("byte {at}: attribute value field {field} has wire type {wire}")),
            _ => {
                w.skip(wire)?;
                if field == 2 {
                    continue;
                }
                Value::Other
            }
        };
    }
    Ok((name, value))
}

fn node(mut w: Wire) -> Result<Node, String> {
    let mut n = Node::default();
    while !w.done() {
        let at = w.at();
        let (field, wire) = w.key()?;
        match field {
            1 => {
                expect("id", wire, 0, at)?;
                n.id = w.varint()?;
            }
            2 => {
                expect("name", wire, 2, at)?;
                n.name = w.string()?;
            }
            3 => {
                expect("type", wire, 0, at)?;
                n.kind = u32::try_from(w.varint()?).map_err(|_| format!("byte {at}: a node type beyond 32 bits"))?;
            }
            4 => w.repeated(wire, &mut n.ctrl_deps)?,
            5 => w.repeated(wire, &mut n.data_deps)?,
            7 => {
                expect("duration_micros", wire, 0, at)?;
                n.duration_micros = w.varint()?;
            }
            10 => {
                expect("attr", wire, 2, at)?;
                let len = w.varint()?;
                n.attrs.push(attribute(w.take(len)?)?);
            }
            _ => w.skip(wire)?,
        }
    }
    Ok(n)
}

/// Reads a trace file's bytes; the error says where the file stops making sense.
pub fn read(bytes: &[u8]) -> Result<Trace, String> {
    let mut w = Wire { b: bytes, pos: 0, base: 0 };
    let mut t = Trace::default();
    let mut first = true;
    while !w.done() {
        let len = w.varint()?;
        let mut rec = w.take(len)?;
        if first {
            // GlobalMetadata: the version (field 1); its attributes are not needed.
            while !rec.done() {
                let at = rec.at();
                let (field, wire) = rec.key()?;
                if field == 1 {
                    expect("version", wire, 2, at)?;
                    t.version = rec.string()?;
                } else {
                    rec.skip(wire)?;
                }
            }
            first = false;
        } else {
            t.nodes.push(node(rec)?);
        }
    }
    if first {
        return Err("empty: no metadata record, no nodes".into());
    }
    Ok(t)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_key(out: &mut Vec<u8>, field: u64, wire: u8) {
    put_varint(out, field << 3 | wire as u64);
}

fn put_bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
    put_key(out, field, 2);
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_record(out: &mut Vec<u8>, msg: &[u8]) {
    put_varint(out, msg.len() as u64);
    out.extend_from_slice(msg);
}

/// Writes `t` in the file format (the inverse of [`read`], for tests and tools): integer
/// attributes as int64 (or uint64 above its range), dependencies packed.
pub fn write(t: &Trace) -> Vec<u8> {
    let mut out = Vec::new();
    let mut meta = Vec::new();
    put_bytes(&mut meta, 1, t.version.as_bytes());
    put_record(&mut out, &meta);
    for n in &t.nodes {
        let mut m = Vec::new();
        put_key(&mut m, 1, 0);
        put_varint(&mut m, n.id);
        put_bytes(&mut m, 2, n.name.as_bytes());
        put_key(&mut m, 3, 0);
        put_varint(&mut m, n.kind as u64);
        for (field, deps) in [(4, &n.ctrl_deps), (5, &n.data_deps)] {
            if !deps.is_empty() {
                let mut packed = Vec::new();
                for &d in deps {
                    put_varint(&mut packed, d);
                }
                put_bytes(&mut m, field, &packed);
            }
        }
        if n.duration_micros > 0 {
            put_key(&mut m, 7, 0);
            put_varint(&mut m, n.duration_micros);
        }
        for (name, value) in &n.attrs {
            let mut a = Vec::new();
            put_bytes(&mut a, 1, name.as_bytes());
            match value {
                Value::Int(x) if *x < 0 || *x <= i64::MAX as i128 => {
                    put_key(&mut a, 9, 0);
                    put_varint(&mut a, *x as i64 as u64);
                }
                Value::Int(x) => {
                    put_key(&mut a, 13, 0);
                    put_varint(&mut a, *x as u64);
                }
                Value::Float(x) => {
                    put_key(&mut a, 3, 1);
                    a.extend_from_slice(&x.to_bits().to_le_bytes());
                }
                Value::Bool(b) => {
                    put_key(&mut a, 27, 0);
                    put_varint(&mut a, *b as u64);
                }
                Value::Text(s) => put_bytes(&mut a, 29, s.as_bytes()),
                Value::Other => {}
            }
            put_bytes(&mut m, 10, &a);
        }
        put_record(&mut out, &m);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trace {
        let coll = Node {
            id: 3,
            name: "allreduce".into(),
            kind: COMM_COLL_NODE,
            data_deps: vec![1, 2],
            attrs: vec![("comm_type".into(), Value::Int(ALL_REDUCE.into())), ("comm_size".into(), Value::Int(1 << 20)), ("pg_name".into(), Value::Text("0".into())), ("is_cpu_op".into(), Value::Bool(false))],
            ..Node::default()
        };
        let comp = Node { id: 1, name: "gemm".into(), kind: COMP_NODE, duration_micros: 12, attrs: vec![("num_ops".into(), Value::Int(1 << 40)), ("neg".into(), Value::Int(-5)), ("r".into(), Value::Float(0.5))], ..Node::default() };
        let send = Node { id: 2, name: "send".into(), kind: COMM_SEND_NODE, ctrl_deps: vec![1], attrs: vec![("comm_dst".into(), Value::Int(1)), ("big".into(), Value::Int(u64::MAX as i128))], ..Node::default() };
        Trace { version: "0.0.4".into(), nodes: vec![comp, send, coll] }
    }

    #[test]
    fn a_written_trace_reads_back_as_it_was() {
        let t = sample();
        assert_eq!(read(&write(&t)).unwrap(), t);
    }

    //= type=test
    //# The bytes of a public ASTRA-sim example trace (a 1 MiB AllReduce node: metadata "0.0.4",
    //# type 7, attributes is_cpu_op = false as a bool, comm_type = 0 and comm_size = 2^20 as
    //# int64) decode to that node.
    #[test]
    fn the_reference_encoding_of_a_collective_node_decodes() {
        let mut b = vec![0x07, 0x0a, 0x05];
        b.extend_from_slice(b"0.0.4");
        let mut node = vec![0x12, 0x04];
        node.extend_from_slice(b"ar1M");
        node.extend_from_slice(&[0x18, 0x07]);
        for (name, tail) in [("is_cpu_op", vec![0xd8, 0x01, 0x00]), ("comm_type", vec![0x48, 0x00]), ("comm_size", vec![0x48, 0x80, 0x80, 0x40])] {
            let mut a = vec![0x0a, name.len() as u8];
            a.extend_from_slice(name.as_bytes());
            a.extend(tail);
            node.push(0x52);
            node.push(a.len() as u8);
            node.extend(a);
        }
        b.push(node.len() as u8);
        b.extend(node);
        let t = read(&b).unwrap();
        assert_eq!(t.version, "0.0.4");
        let n = &t.nodes[0];
        assert_eq!((n.id, n.name.as_str(), n.kind), (0, "ar1M", COMM_COLL_NODE));
        assert_eq!((n.int("comm_type").unwrap(), n.int("comm_size").unwrap(), n.attr("is_cpu_op")), (Some(0), Some(1 << 20), Some(&Value::Bool(false))));
    }

    #[test]
    fn truncated_and_corrupt_files_say_where() {
        let b = write(&sample());
        for cut in [1, 5, b.len() / 2, b.len() - 1] {
            let e = read(&b[..cut]).unwrap_err();
            assert!(e.contains("truncated at byte"), "cut at {cut}: {e}");
        }
        assert!(read(&[]).unwrap_err().contains("empty"));
        // A record whose field has a group wire type.
        let e = read(&[0x00, 0x02, 0x0b, 0x00]).unwrap_err();
        assert!(e.contains("wire type 3"), "{e}");
        // Unpacked dependencies read as packed ones.
        let mut rec = vec![0x20, 0x05, 0x20, 0x06];
        let mut file = vec![0x00];
        file.push(rec.len() as u8);
        file.append(&mut rec);
        assert_eq!(read(&file).unwrap().nodes[0].ctrl_deps, vec![5, 6]);
    }
}
