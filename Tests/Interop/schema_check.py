#!/usr/bin/env python3
"""Independent checks of docs/asyncapi.yaml and docs/schemas with Python jsonschema (draft-07).

  schema_check.py lint DOCS_DIR
      Every docs/schemas/*.schema.json is a valid draft-07 schema (Draft7Validator.check_schema)
      whose $refs resolve; docs/asyncapi.yaml parses, is AsyncAPI 3.0.x, and every $ref in it
      resolves to an existing file and JSON pointer. Prints "ok" or the problems (exit 1).

  schema_check.py validate DOCS_DIR
      Reads JSON lines {"id", "schema": "<file>", "raw": "<base64 bytes>"} or {"id", "schema",
      "instance": <JSON>} on stdin; writes one JSON line per input: {"id", "parsed", "valid",
      "errors", "undeclared"}. "raw" is decoded as strict UTF-8 and parsed with Python's json
      module (parsed: false when that fails). "undeclared" lists member paths the schema does not
      declare (checked for emitted records: a new field must be documented).
"""
import base64, json, pathlib, sys
import yaml
from jsonschema import Draft7Validator
from referencing import Registry
from referencing.jsonschema import DRAFT7


def load_registry(docs):
    schemas = {}
    for path in sorted((docs / "schemas").glob("*.schema.json")):
        schemas[path.resolve().as_uri()] = json.loads(path.read_text(encoding="utf-8"))
    registry = Registry().with_resources((uri, DRAFT7.create_resource(s)) for uri, s in schemas.items())
    return schemas, registry


def pointer(document, fragment):
    node = document
    if not fragment:
        return node
    if not fragment.startswith("/"):
        raise KeyError(f"not a JSON pointer: #{fragment}")
    for token in fragment[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            raise KeyError(f"#{fragment}: no '{token}'")
    return node


def refs(node, path="#"):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield path, value
            else:
                yield from refs(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from refs(value, f"{path}/{index}")


def check_refs(document, base, problems, label):
    """Every $ref of `document` (a file at `base`) names an existing file and pointer."""
    for where, ref in refs(document):
        target, _, fragment = ref.partition("#")
        try:
            if target:
                file = (base.parent / target).resolve()
                if not file.is_file():
                    raise KeyError(f"no file {target}")
                text = file.read_text(encoding="utf-8")
                other = yaml.safe_load(text) if file.suffix in (".yaml", ".yml") else json.loads(text)
                pointer(other, fragment)
            else:
                pointer(document, fragment)
        except (KeyError, ValueError, IndexError) as error:
            problems.append(f"{label} {where}: $ref {ref} does not resolve ({error})")


def lint(docs):
    problems = []
    schemas, registry = load_registry(docs)
    if not schemas:
        problems.append("no docs/schemas/*.schema.json")
    for uri, schema in schemas.items():
        name = uri.rsplit("/", 1)[-1]
        if schema.get("$schema") != "http://json-schema.org/draft-07/schema#":
            problems.append(f"{name}: $schema is not draft-07")
        try:
            Draft7Validator.check_schema(schema)
        except Exception as error:  # SchemaError
            problems.append(f"{name}: not a valid draft-07 schema: {error.message if hasattr(error, 'message') else error}")
        check_refs(schema, docs / "schemas" / name, problems, name)
        # Compiling every pattern and resolving every reference: validate a few instances.
        validator = Draft7Validator(schema, registry=registry, _resolver=registry.resolver(base_uri=uri))
        for sample in ({}, {"a": 1}, [], "x", 1, None):
            try:
                list(validator.iter_errors(sample))
            except Exception as error:
                problems.append(f"{name}: validating a sample failed: {error}")
    asyncapi_path = docs / "asyncapi.yaml"
    try:
        document = yaml.safe_load(asyncapi_path.read_text(encoding="utf-8"))
    except Exception as error:
        problems.append(f"asyncapi.yaml does not parse: {error}")
        document = None
    if isinstance(document, dict):
        version = str(document.get("asyncapi", ""))
        if not version.startswith("3.0."):
            problems.append(f"asyncapi.yaml: asyncapi is '{version}', not 3.0.x")
        for key in ("info", "channels", "operations", "components"):
            if key not in document:
                problems.append(f"asyncapi.yaml: no '{key}'")
        check_refs(document, asyncapi_path, problems, "asyncapi.yaml")
        # Schemas inlined in components must be valid draft-07 too.
        for name, schema in (document.get("components", {}).get("schemas") or {}).items():
            body = schema.get("schema", schema) if isinstance(schema, dict) and "schemaFormat" in schema else schema
            if isinstance(body, dict) and "$ref" not in body:
                try:
                    Draft7Validator.check_schema(body)
                except Exception as error:
                    problems.append(f"asyncapi.yaml components/schemas/{name}: {getattr(error, 'message', error)}")
    elif document is not None:
        problems.append("asyncapi.yaml is not a mapping")
    print("\n".join(problems) if problems else "ok")
    return 1 if problems else 0


def undeclared(schema_node, instance, resolver, path=""):
    """Member paths of `instance` that no `properties` of the schema (followed through $ref and combinators) declares."""
    def branches(node, resolver, depth=0):
        if not isinstance(node, dict) or depth > 20:
            return
        if "$ref" in node:
            resolved = resolver.lookup(node["$ref"])
            yield from branches(resolved.contents, resolved.resolver, depth + 1)
            return
        yield node, resolver
        for key in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(key, []):
                yield from branches(sub, resolver, depth + 1)
        for key in ("then", "else"):
            if key in node:
                yield from branches(node[key], resolver, depth + 1)
    found = []
    if isinstance(instance, dict):
        declared = {}
        for node, res in branches(schema_node, resolver):
            for key, sub in (node.get("properties") or {}).items():
                declared.setdefault(key, []).append((sub, res))
        for key, value in instance.items():
            if key not in declared:
                found.append(f"{path}/{key}")
            else:
                for sub, res in declared[key]:
                    found += undeclared(sub, value, res, f"{path}/{key}")
                    break
    return found


def validate(docs):
    schemas, registry = load_registry(docs)
    validators = {}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        item = json.loads(line)
        name = item["schema"]
        uri = (docs / "schemas" / name).resolve().as_uri()
        if name not in validators:
            resolver = registry.resolver(base_uri=uri)
            validators[name] = (Draft7Validator(schemas[uri], registry=registry, _resolver=resolver), resolver)
        validator, resolver = validators[name]
        out = {"id": item.get("id"), "parsed": True, "valid": False, "errors": [], "undeclared": []}
        if "raw" in item:
            try:
                instance = json.loads(base64.b64decode(item["raw"]).decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError) as error:
                out["parsed"] = False
                out["errors"] = [f"not JSON: {error}"[:200]]
                print(json.dumps(out), flush=True)
                continue
        else:
            instance = item["instance"]
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
        out["valid"] = not errors
        out["errors"] = [f"/{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"[:300] for e in errors[:5]]
        out["undeclared"] = undeclared(schemas[uri], instance, resolver)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    mode, docs = sys.argv[1], pathlib.Path(sys.argv[2])
    sys.exit(lint(docs) if mode == "lint" else validate(docs))
