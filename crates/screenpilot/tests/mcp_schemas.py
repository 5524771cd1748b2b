"""List screenpilot's MCP tools (every tool, and each --tools profile) over stdio with raw JSON-RPC,
as served by default and with `--output-schemas full`, and check that every schema is a valid JSON
Schema Draft 2020-12 with no `true` subschema, that every default outputSchema is compact (at most
MOST_SUBSCHEMAS schema objects), and that every description fits OpenAI's 1,024 characters.

Usage: mcp_schemas.py BINARY [PROFILES ...]   ("" is the full list). Prints a JSON summary:
{"PROFILE": {"tools": [names], "bytes": N}}; exits 1 with the problems on stderr.
"""

import json
import subprocess
import sys

import jsonschema

SUBSCHEMA = {"additionalProperties", "unevaluatedProperties", "items", "additionalItems",
             "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}
SUBSCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
SUBSCHEMA_LISTS = {"anyOf", "oneOf", "allOf", "prefixItems"}
# MOST_SUBSCHEMAS in src/mcp/output_schemas.rs: what keeps SDK 1.x's check of a result under 2 ms.
MOST_SUBSCHEMAS = 4


def subschemas(schema):
    """Schema objects in a schema, itself included: what the metaschema check walks."""
    if not isinstance(schema, dict):
        return 1
    count = 1
    for key, value in schema.items():
        if key in SUBSCHEMA_MAPS and isinstance(value, dict):
            count += sum(subschemas(v) for v in value.values())
        elif key in SUBSCHEMA_LISTS and isinstance(value, list):
            count += sum(subschemas(v) for v in value)
        elif key in SUBSCHEMA:
            count += subschemas(value)
    return count


def boolean_subschemas(schema, path):
    """Paths of subschemas written as booleans, except `additionalProperties: false`."""
    found = []
    if isinstance(schema, bool):
        return [path]
    if not isinstance(schema, dict):
        return found
    for key, value in schema.items():
        if key in SUBSCHEMA:
            if not (key == "additionalProperties" and value is False):
                found += boolean_subschemas(value, f"{path}.{key}")
        elif key in SUBSCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                found += boolean_subschemas(sub, f"{path}.{key}.{name}")
        elif key in SUBSCHEMA_LISTS and isinstance(value, list):
            for i, sub in enumerate(value):
                found += boolean_subschemas(sub, f"{path}.{key}[{i}]")
    return found


def tools_list(binary, profile, full=False):
    args = [binary, "mcp"] + (["--tools", profile] if profile else [])
    args += ["--output-schemas", "full"] if full else []
    server = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def send(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "mcp_schemas", "version": "1"}}})
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    line = server.stdout.readline()
    server.stdin.close()
    server.wait(timeout=10)
    return line, json.loads(line)["result"]


def main():
    binary, profiles = sys.argv[1], sys.argv[2:] or [""]
    problems, summary = [], {}
    for profile in profiles:
        _, full = tools_list(binary, profile, full=True)
        full_schemas = {t["name"]: t.get("outputSchema") for t in full["tools"]}
        line, result = tools_list(binary, profile)
        for tool in result["tools"]:
            name = tool["name"]
            output = tool.get("outputSchema")
            if isinstance(output, dict) and subschemas(output) > MOST_SUBSCHEMAS:
                problems.append(f"{name}: the default outputSchema has {subschemas(output)} subschemas")
            tool = dict(tool, fullOutputSchema=full_schemas.get(name))
            if len(tool["description"]) > 1024:
                problems.append(f"{name}: description is {len(tool['description'])} characters")
            if not tool.get("annotations"):
                problems.append(f"{name}: no annotations")
            for field in ("inputSchema", "outputSchema", "fullOutputSchema"):
                schema = tool.get(field)
                if not isinstance(schema, dict):
                    problems.append(f"{name}: no {field}")
                    continue
                try:
                    jsonschema.Draft202012Validator.check_schema(schema)
                except jsonschema.SchemaError as e:
                    problems.append(f"{name}: {field} is not Draft 2020-12: {e.message}")
                for path in boolean_subschemas(schema, f"{name}.{field}"):
                    problems.append(f"{path}: a boolean subschema")
        listed = json.dumps(result, separators=(",", ":"))
        summary[profile or "all"] = {
            "tools": [t["name"] for t in result["tools"]],
            "bytes": len(listed.encode()),
        }
    print(json.dumps(summary))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
