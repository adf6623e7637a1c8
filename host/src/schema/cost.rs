//! What checking one value against a schema can cost, worst case, found before the schema is
//! compiled.
//!
//! A schema comes from the server, and a validator does what it says: `anyOf` tries each of
//! its branches, and a `$ref` checks the value against another subschema again. Twenty
//! `anyOf`s of two branches, each `$ref`-ing the next, are a kilobyte of schema, and a value
//! that fails them is checked against 2^20 subschemas; branches that each descend into the
//! same property do the same, doubling the work at every level of the value. MCP asks that
//! implementations bound this ("Composition-Keyword Resource Use"), as a validator otherwise
//! lets a server hang its client.
//!
//! The bound is the most subschemas that any one value of an instance can be checked
//! against: at the instance's root, the subschemas reached without descending (through
//! `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, `dependencies` and
//! `$ref`), each counted once per path that reaches it; below it, for the worst property name
//! or array position at each level, the same sum over every subschema that applies there,
//! down to the deepest value the limits admit. A property's schema and `additionalProperties`
//! never both apply to one property, nor `items` of an array and its positional `prefixItems`
//! to one position, so a recursive schema that describes a tree (each node's `children`
//! items are nodes) costs what one node costs; one whose branches both descend into one
//! property doubles at each level and is refused. A `$ref` that leads back to a subschema
//! already being expanded for the same value is counted once, as the validator does not
//! loop on it. Where a choice cannot be told apart without the value (which pattern of
//! `patternProperties` a name matches), every one is assumed to apply.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

/// How many steps the analysis itself may take before it gives up and refuses the schema:
/// the analysis of a hostile schema is bounded too. Real tool schemas take a few hundred.
const STEPS: u64 = 2_000_000;

/// A subschema, known by where it is in the document.
fn id(schema: &Value) -> usize {
    std::ptr::from_ref(schema) as usize
}

/// The most subschemas one value of an instance nested at most `depth` deep can be checked
/// against by `schema`, if that is at most `most`; otherwise why not, as a sentence.
pub(crate) fn worst_case(schema: &Value, depth: usize, most: u64) -> Result<u64, String> {
    let mut anchors = HashMap::new();
    collect_anchors(schema, &mut anchors);
    let mut cost = Cost {
        root: schema,
        anchors,
        expansions: HashMap::new(),
        worst: HashMap::new(),
        steps: 0,
        most,
    };
    cost.worst(schema, depth)
}

/// Whether `schema` holds at most `most` JSON objects (each subschema is one, and so is each
/// `properties` or `$defs` map); if not, why, as a sentence. Compiling a schema costs more
/// than its size: `jsonschema` took 0.22 s over ten thousand `$defs` that `$ref` one another,
/// and four times as long over twice as many.
pub(crate) fn within_size(schema: &Value, most: usize) -> Result<(), String> {
    let mut objects = 0_usize;
    let mut pending = vec![schema];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(members) => {
                objects += 1;
                if objects > most {
                    return Err(format!("it holds more than {most} objects"));
                }
                pending.extend(members.values());
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    Ok(())
}

/// Every `$anchor` and `$dynamicAnchor` of the document, for `$ref`s written `#name`.
fn collect_anchors<'s>(value: &'s Value, anchors: &mut HashMap<&'s str, &'s Value>) {
    match value {
        Value::Object(members) => {
            for keyword in ["$anchor", "$dynamicAnchor"] {
                if let Some(name) = members.get(keyword).and_then(Value::as_str) {
                    anchors.insert(name, value);
                }
            }
            members
                .values()
                .for_each(|member| collect_anchors(member, anchors));
        }
        Value::Array(items) => items.iter().for_each(|item| collect_anchors(item, anchors)),
        _ => {}
    }
}

struct Cost<'s> {
    root: &'s Value,
    anchors: HashMap<&'s str, &'s Value>,
    /// Each subschema's expansion: what applies to the same value, with how many paths lead
    /// to each.
    expansions: HashMap<usize, std::rc::Rc<Vec<(&'s Value, u64)>>>,
    /// `worst` of each (subschema, depth) already found.
    worst: HashMap<(usize, usize), u64>,
    steps: u64,
    most: u64,
}

impl<'s> Cost<'s> {
    fn step(&mut self, by: usize) -> Result<(), String> {
        self.steps = self.steps.saturating_add(by as u64);
        if self.steps > STEPS {
            return Err(format!(
                "it is too large to bound what checking a value against it costs (over {STEPS} steps)"
            ));
        }
        Ok(())
    }

    /// The subschema a reference names, where it is in this document.
    fn resolve(&self, reference: &str) -> Result<&'s Value, String> {
        let found = match reference.strip_prefix('#') {
            Some("") => Some(self.root),
            Some(pointer) if pointer.starts_with('/') => self.root.pointer(&unescape(pointer)),
            Some(anchor) => self.anchors.get(anchor).copied(),
            None => None,
        };
        found.ok_or_else(|| {
            format!("its $ref {reference:?} does not name a place in the schema itself")
        })
    }

    /// The subschemas that apply to the same value as `schema` does (itself included), each
    /// with how many paths reach it, in an order where each comes after every one that
    /// leads to it.
    fn expansion(
        &mut self,
        schema: &'s Value,
    ) -> Result<std::rc::Rc<Vec<(&'s Value, u64)>>, String> {
        if let Some(known) = self.expansions.get(&id(schema)) {
            return Ok(known.clone());
        }
        // Depth first, without recursion: a chain of `$ref`s may be long. An edge back to a
        // subschema still open is a loop, which the validator stops; it is left out.
        let mut order: Vec<&'s Value> = Vec::new();
        let mut edges: HashMap<usize, Vec<&'s Value>> = HashMap::new();
        let mut open: BTreeSet<usize> = BTreeSet::new();
        let mut done: BTreeSet<usize> = BTreeSet::new();
        let mut stack: Vec<(&'s Value, Vec<&'s Value>)> = Vec::new();
        let children = self.in_place(schema)?;
        open.insert(id(schema));
        stack.push((schema, children));
        while let Some((node, pending)) = stack.last_mut() {
            let node = *node;
            match pending.pop() {
                Some(child) => {
                    self.step(1)?;
                    if open.contains(&id(child)) {
                        continue;
                    }
                    edges.entry(id(node)).or_default().push(child);
                    if done.contains(&id(child)) {
                        continue;
                    }
                    let grandchildren = self.in_place(child)?;
                    open.insert(id(child));
                    stack.push((child, grandchildren));
                }
                None => {
                    open.remove(&id(node));
                    done.insert(id(node));
                    order.push(node);
                    stack.pop();
                }
            }
        }
        order.reverse();
        let mut paths: HashMap<usize, u64> = HashMap::from([(id(schema), 1)]);
        for node in &order {
            let here = paths.get(&id(node)).copied().unwrap_or(0);
            for child in edges.get(&id(node)).into_iter().flatten() {
                let count = paths.entry(id(child)).or_insert(0);
                *count = count.saturating_add(here);
            }
        }
        let expansion: Vec<(&'s Value, u64)> = order
            .into_iter()
            .map(|node| (node, paths.get(&id(node)).copied().unwrap_or(0)))
            .collect();
        let expansion = std::rc::Rc::new(expansion);
        self.expansions.insert(id(schema), expansion.clone());
        Ok(expansion)
    }

    /// The subschemas `schema` applies to the value it checks, once per mention.
    fn in_place(&self, schema: &'s Value) -> Result<Vec<&'s Value>, String> {
        let Some(members) = schema.as_object() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for keyword in ["$ref", "$dynamicRef"] {
            if let Some(reference) = members.get(keyword).and_then(Value::as_str) {
                out.push(self.resolve(reference)?);
            }
        }
        if members.contains_key("$recursiveRef") {
            out.push(self.root);
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            out.extend(
                members
                    .get(keyword)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            );
        }
        out.extend(
            ["not", "if", "then", "else"]
                .into_iter()
                .filter_map(|keyword| members.get(keyword)),
        );
        for keyword in ["dependentSchemas", "dependencies"] {
            out.extend(
                members
                    .get(keyword)
                    .and_then(Value::as_object)
                    .into_iter()
                    .flat_map(Map::values)
                    .filter(|value| value.is_object() || value.is_boolean()),
            );
        }
        Ok(out)
    }

    /// The most subschemas one value at most `depth` below a value `schema` checks can be
    /// checked against, if that is at most `self.most`.
    fn worst(&mut self, schema: &'s Value, depth: usize) -> Result<u64, String> {
        if let Some(&known) = self.worst.get(&(id(schema), depth)) {
            return Ok(known);
        }
        let expansion = self.expansion(schema)?;
        let mut worst = expansion
            .iter()
            .fold(0_u64, |sum, (_, paths)| sum.saturating_add(*paths));
        if let Some(below) = depth.checked_sub(1) {
            let schemas: Vec<(&'s Map<String, Value>, u64)> = expansion
                .iter()
                .filter_map(|(schema, paths)| Some((schema.as_object()?, *paths)))
                .collect();
            worst = worst.max(self.worst_property(&schemas, below)?);
            worst = worst.max(self.worst_item(&schemas, below)?);
        }
        if worst > self.most {
            return Err(format!(
                "checking one value against it could take more than {} subschemas, as its \
                 anyOf, oneOf, allOf or $ref branches multiply",
                self.most
            ));
        }
        self.worst.insert((id(schema), depth), worst);
        Ok(worst)
    }

    /// `sum`, plus `worst` of each of `children`, reached by `paths` paths each.
    fn add_worst(
        &mut self,
        sum: u64,
        paths: u64,
        children: impl IntoIterator<Item = &'s Value>,
        depth: usize,
    ) -> Result<u64, String> {
        let mut sum = sum;
        for child in children {
            let cost = self.worst(child, depth)?;
            sum = sum.saturating_add(paths.saturating_mul(cost));
        }
        Ok(sum)
    }

    /// The worst of `worst` over the subschemas that apply to one property of an object that
    /// `objects` (an expansion's schemas, with their paths) check, for the worst property
    /// name.
    fn worst_property(
        &mut self,
        objects: &[(&'s Map<String, Value>, u64)],
        depth: usize,
    ) -> Result<u64, String> {
        let names: BTreeSet<&'s str> = objects
            .iter()
            .filter_map(|(members, _)| members.get("properties")?.as_object())
            .flat_map(|properties| properties.keys().map(String::as_str))
            .collect();
        let mut worst = 0;
        // Each name some schema gives, then any other name.
        for name in names.into_iter().map(Some).chain([None]) {
            let mut sum = 0_u64;
            for &(members, paths) in objects {
                self.step(1)?;
                let named = name.and_then(|name| {
                    members
                        .get("properties")
                        .and_then(Value::as_object)
                        .and_then(|properties| properties.get(name))
                });
                let applied = named
                    .or_else(|| members.get("additionalProperties"))
                    .into_iter()
                    .chain(
                        members
                            .get("patternProperties")
                            .and_then(Value::as_object)
                            .into_iter()
                            .flat_map(Map::values),
                    )
                    .chain(
                        ["unevaluatedProperties", "propertyNames"]
                            .into_iter()
                            .filter_map(|keyword| members.get(keyword)),
                    );
                sum = self.add_worst(sum, paths, applied, depth)?;
            }
            worst = worst.max(sum);
        }
        Ok(worst)
    }

    /// The same for one item of an array, for the worst position.
    fn worst_item(
        &mut self,
        arrays: &[(&'s Map<String, Value>, u64)],
        depth: usize,
    ) -> Result<u64, String> {
        let positional = |members: &'s Map<String, Value>| -> &'s [Value] {
            members
                .get("prefixItems")
                .or_else(|| members.get("items").filter(|items| items.is_array()))
                .and_then(Value::as_array)
                .map_or(&[], Vec::as_slice)
        };
        let positions = arrays
            .iter()
            .map(|(members, _)| positional(members).len())
            .max()
            .unwrap_or(0);
        let mut worst = 0;
        // Each position some schema gives, then any later one.
        for position in (0..positions).map(Some).chain([None]) {
            let mut sum = 0_u64;
            for &(members, paths) in arrays {
                self.step(1)?;
                sum = match position.and_then(|at| positional(members).get(at)) {
                    Some(at) => self.add_worst(sum, paths, [at], depth)?,
                    None => {
                        let rest = ["items", "additionalItems"]
                            .into_iter()
                            .filter_map(|keyword| members.get(keyword))
                            .filter(|items| !items.is_array());
                        self.add_worst(sum, paths, rest, depth)?
                    }
                };
                let anywhere = ["contains", "unevaluatedItems"]
                    .into_iter()
                    .filter_map(|keyword| members.get(keyword));
                sum = self.add_worst(sum, paths, anywhere, depth)?;
            }
            worst = worst.max(sum);
        }
        Ok(worst)
    }
}

/// A JSON pointer as written in a URI fragment: `%25` and the like decoded.
fn unescape(pointer: &str) -> String {
    let bytes = pointer.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let hex = |offset: usize| {
            bytes
                .get(at + offset)
                .and_then(|&digit| char::from(digit).to_digit(16))
        };
        match (byte, hex(1), hex(2)) {
            (b'%', Some(high), Some(low)) => {
                out.push(u8::try_from(high * 16 + low).unwrap_or(b'%'));
                at += 3;
            }
            _ => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn worst(schema: &Value) -> Result<u64, String> {
        worst_case(schema, 64, 1_000)
    }

    /// `levels` anyOfs of two branches, each `$ref`-ing the next, under property `a`.
    fn chain(levels: usize) -> Value {
        let mut defs = Map::new();
        for level in 0..levels {
            let next = format!("#/$defs/d{}", level + 1);
            defs.insert(
                format!("d{level}"),
                json!({"anyOf": [{"$ref": next}, {"$ref": next}]}),
            );
        }
        defs.insert(format!("d{levels}"), json!({"type": "string"}));
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/d0"}}, "$defs": defs})
    }

    #[test]
    fn a_schema_of_more_objects_than_the_bound_is_refused() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string"}, "b": {"items": [{"type": "number"}]}}});
        // The schema, its properties, a, b and b's one item.
        assert_eq!(within_size(&schema, 5), Ok(()));
        assert_eq!(
            within_size(&schema, 4),
            Err("it holds more than 4 objects".to_owned())
        );
    }

    #[test]
    fn a_plain_schema_checks_each_value_against_a_few_subschemas() {
        assert_eq!(worst(&json!({"type": "object"})), Ok(1));
        assert_eq!(worst(&json!(true)), Ok(1));
        // The value of `a`: its own schema and the two branches.
        let schema = json!({"type": "object", "properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "b": {"type": "string"}}});
        assert_eq!(worst(&schema), Ok(3));
    }

    #[test]
    fn refs_that_branch_in_place_multiply_and_are_refused() {
        // The value of `a`: its `$ref`, then 2^i copies of each d_i and 2^(i+1) of its
        // branches, 2^(k+2) - 2 in all.
        assert_eq!(worst(&chain(3)), Ok(30));
        assert_eq!(worst(&chain(7)), Ok(510));
        let refused = worst(&chain(8)).unwrap_err();
        assert!(refused.contains("more than 1000 subschemas"), "{refused}");
        // Seventy levels: 2^72 saturates the count, and the analysis, which counts paths
        // rather than walking them, stays as small as the schema.
        assert!(worst_case(&chain(70), 64, u64::MAX - 1).is_err());
    }

    #[test]
    fn branches_that_each_descend_into_one_property_are_refused() {
        let schema = json!({"$ref": "#/$defs/n", "$defs": {"n": {"anyOf": [
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}},
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}]}}});
        // Each level of the value doubles the work: fine for a shallow value, not for a
        // deep one.
        assert_eq!(worst_case(&schema, 3, 1_000), Ok(32));
        assert!(worst(&schema).is_err());
        // The same through items.
        let items = json!({"$ref": "#/$defs/n", "$defs": {"n": {"allOf": [
            {"items": {"$ref": "#/$defs/n"}}, {"items": {"$ref": "#/$defs/n"}}]}}});
        assert!(worst(&items).is_err());
    }

    #[test]
    fn recursive_schemas_of_trees_and_json_values_cost_what_one_level_costs() {
        let tree = json!({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
            "properties": {"name": {"type": "string"},
                "left": {"$ref": "#/$defs/node"}, "right": {"$ref": "#/$defs/node"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "additionalProperties": {"$ref": "#/$defs/node"}}}});
        assert_eq!(worst(&tree), Ok(2));
        let json_value = json!({"$defs": {"json": {"anyOf": [
            {"type": ["string", "number", "boolean", "null"]},
            {"type": "array", "items": {"$ref": "#/$defs/json"}},
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/json"}}]}},
            "$ref": "#/$defs/json"});
        assert_eq!(worst(&json_value), Ok(5));
        // Draft 7's tuples, and 2020-12's: one position, one schema.
        let pair = json!({"type": "array", "items": [{"$ref": "#"}, {"type": "number"}],
            "additionalItems": false});
        assert_eq!(worst(&pair), Ok(2));
        let pair = json!({"type": "array", "prefixItems": [{"$ref": "#"}, {"type": "number"}],
            "items": false});
        assert_eq!(worst(&pair), Ok(2));
    }

    #[test]
    fn a_loop_of_refs_that_never_descends_is_counted_once() {
        let schema = json!({"$ref": "#/$defs/a", "$defs": {
            "a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#"}]}}});
        assert_eq!(worst(&schema), Ok(5));
    }

    #[test]
    fn refs_are_followed_within_the_schema_only() {
        let anchored = json!({"$defs": {"x": {"$anchor": "point", "type": "number"},
            "a b": {"type": "string"}},
            "properties": {"p": {"$ref": "#point"}, "q": {"$ref": "#/$defs/a%20b"}}});
        assert_eq!(worst(&anchored), Ok(2));
        for reference in ["other.json#/x", "#/$defs/missing", "#nowhere"] {
            let schema = json!({"properties": {"a": {"$ref": reference}}});
            let refused = worst(&schema).unwrap_err();
            assert!(
                refused.contains("does not name a place in the schema itself"),
                "{reference}: {refused}"
            );
        }
    }
}
