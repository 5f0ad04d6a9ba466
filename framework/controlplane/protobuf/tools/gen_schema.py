#!/usr/bin/env python3
"""Generates src/schema/gen_*.rs: protobuf field tables for the supported Kubernetes kinds.

Inputs (from the local cargo registry):
  * k8s-pb 0.9.0 (prost-build output of Kubernetes' generated.proto files): message names,
    field tags, wire types, cardinality and nested message types;
  * k8s-openapi 0.29.0 (`v1_37`): the exact JSON field names (`"podIP" => Field::Key_pod_ip`),
    since prost's snake_case names are lossy (`pod_ip` could be `podIp` or `podIP`).

Usage: python3 tools/gen_schema.py  (run from framework/controlplane/protobuf; then `cargo fmt -p mni-protobuf`).
"""
import glob
import os
import re
import sys

REG = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/"))[0]
PB = os.path.join(REG, "k8s-pb-0.9.0/src")
OA = os.path.join(REG, "k8s-openapi-0.29.0/src/v1_37")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "schema")

# Root messages: (module path, prost struct name). Kept in sync with src/schema/kinds.rs.
ROOTS = [
    ("api/core/v1", n) for n in [
        "Namespace", "ConfigMap", "Secret", "Service", "ServiceAccount", "Pod", "Event",
        "Endpoints", "PersistentVolumeClaim", "Binding"]
] + [("api/apps/v1", n) for n in ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"]] + [
    ("api/batch/v1", "Job"), ("api/batch/v1", "CronJob"),
    ("api/coordination/v1", "Lease"),
    ("api/events/v1", "Event"),
] + [("api/rbac/v1", n) for n in ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]] + [
    ("api/networking/v1", n) for n in ["NetworkPolicy", "Ingress", "IngressClass"]
] + [
    ("apiextensions_apiserver/pkg/apis/apiextensions/v1", "CustomResourceDefinition"),
    ("api/authentication/v1", "TokenRequest"), ("api/authentication/v1", "TokenReview"),
    ("api/authentication/v1", "SelfSubjectReview"),
] + [("api/authorization/v1", n) for n in [
    "SelfSubjectAccessReview", "SubjectAccessReview", "LocalSubjectAccessReview", "SelfSubjectRulesReview"]] + [
    ("apimachinery/pkg/apis/meta/v1", "DeleteOptions"),
    ("api/autoscaling/v1", "Scale"),
    ("api/policy/v1", "Eviction"),
]

# Messages whose JSON form is not an object (see src/special.rs).
SPECIAL = {
    ("apimachinery/pkg/apis/meta/v1", "Time"): "Time",
    ("apimachinery/pkg/apis/meta/v1", "MicroTime"): "MicroTime",
    ("apimachinery/pkg/apis/meta/v1", "Duration"): "Duration",
    ("apimachinery/pkg/apis/meta/v1", "FieldsV1"): "RawJson",
    ("apimachinery/pkg/apis/meta/v1", "Verbs"): "StringList",
    ("apimachinery/pkg/util/intstr", "IntOrString"): "IntOrString",
    ("apimachinery/pkg/api/resource", "Quantity"): "Quantity",
    ("apimachinery/pkg/runtime", "RawExtension"): "RawJson",
    ("apiextensions_apiserver/pkg/apis/apiextensions/v1", "Json"): "RawJson",
    ("apiextensions_apiserver/pkg/apis/apiextensions/v1", "JsonSchemaPropsOrArray"): "SchemaOrArray",
    ("apiextensions_apiserver/pkg/apis/apiextensions/v1", "JsonSchemaPropsOrBool"): "SchemaOrBool",
    ("apiextensions_apiserver/pkg/apis/apiextensions/v1", "JsonSchemaPropsOrStringArray"): "SchemaOrStringArray",
}
# Messages without a k8s-openapi struct of their own (inlined Go structs): whose names to use.
NAME_SOURCE = {
    "EphemeralContainerCommon": "Container",
    "VolumeSource": "Volume",
    "ProbeHandler": "Probe",
    "IngressRuleValue": "IngressRule",
    "PersistentVolumeSource": "PersistentVolumeSpec",
}
# Go embedded structs whose field name differs from their type name.
INLINE = {("Probe", "handler")}
# JSON names that neither prost's nor k8s-openapi's Rust names spell out.
OVERRIDES = {
    ("JsonSchemaProps", "ref"): "$ref",
    ("JsonSchemaProps", "schema"): "$schema",
}

SCALARS = {"string": "Str", "bytes": "Bytes", "bool": "Bool", "int32": "Int32", "int64": "Int64",
           "double": "Double"}


def parse_pb(modpath):
    text = open(os.path.join(PB, modpath, "mod.rs")).read()
    msgs = {}
    for m in re.finditer(r"pub struct (\w+) \{\n(.*?)\n\}", text, re.S):
        name, body = m.group(1), m.group(2)
        body = re.sub(r"///[^\n]*", "", body)
        body = " ".join(body.split())
        fields = []
        for fm in re.finditer(r"#\[prost\((.*?)\)\] pub (?:r#)?(\w+): (.*?),(?= #\[|$)", body):
            rtype = re.sub(r",\s*>", ">", fm.group(3)).replace(" ", "")
            fields.append((fm.group(1), fm.group(2), rtype))
        msgs[name] = fields
    for m in re.finditer(r"pub struct (\w+) \{\}", text):
        msgs[m.group(1)] = []
    return msgs


PB_CACHE = {}


def pb(modpath):
    if modpath not in PB_CACHE:
        PB_CACHE[modpath] = parse_pb(modpath)
    return PB_CACHE[modpath]


def openapi_names(modpath, struct):
    d = os.path.join(OA, modpath)
    for f in glob.glob(os.path.join(d, "*.rs")):
        text = open(f).read()
        if not re.search(r"pub struct (\w+)", text):
            continue
        sname = re.search(r"pub struct (\w+)", text).group(1)
        if sname.lower() == struct.lower():
            return sname, dict((r, j) for j, r in re.findall(r'"([^"]+)" => Field::Key_(\w+)', text))
    return None, {}


def resolve(modpath, tpath):
    parts = tpath.split("::")
    cur = modpath.split("/")
    while parts and parts[0] == "super":
        parts.pop(0)
        cur.pop()
    return "/".join(cur + parts[:-1]), parts[-1]


def inner_type(t):
    for w in ["::core::option::Option<", "::prost::alloc::vec::Vec<", "::prost::alloc::boxed::Box<"]:
        while t.startswith(w):
            t = t[len(w):-1].strip()
    return t


def pkg_key(modpath):
    p = modpath.split("/")
    if p[0] == "api":
        return "_".join(p[1:])
    if p[0] == "apiextensions_apiserver":
        return "apiextensions_" + p[-1]
    if p[:2] == ["apimachinery", "pkg"] and p[2] == "apis":
        return "_".join(p[3:])
    return p[-1]


def proto_pkg(modpath):
    return "k8s.io." + modpath.replace("/", ".")


def const_name(modpath, name):
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).upper()
    return (pkg_key(modpath) + "_" + snake).upper()


def lower_camel(snake):
    p = snake.split("_")
    return p[0] + "".join(x[:1].upper() + x[1:] for x in p[1:])


def main():
    todo = list(ROOTS)
    seen = {}
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        modpath, name = key
        fields = pb(modpath).get(name)
        if fields is None:
            sys.exit(f"missing {key}")
        goname, jnames = openapi_names(modpath, name)
        if goname is None and name in NAME_SOURCE:
            jnames = openapi_names(modpath, NAME_SOURCE[name])[1]
        norm = {re.sub(r"[_\-]", "", r).rstrip("_").lower(): j for r, j in jnames.items()}
        out = []
        for attr, rname, rtype in fields:
            tag = int(re.search(r'tag = "(\d+)"', attr).group(1))
            if (name, rname) in OVERRIDES:
                json = OVERRIDES[(name, rname)]
            elif rname in jnames or rname + "_" in jnames:
                json = jnames.get(rname) or jnames[rname + "_"]
            elif rname.replace("_", "").lower() in norm:
                json = norm[rname.replace("_", "").lower()]
            elif goname and attr.startswith("message, optional") and (
                    inner_type(rtype).split("::")[-1].lower() == rname.replace("_", "")
                    or (name, rname) in INLINE):
                # A Go embedded struct (`json:",inline"`): its fields are merged into the parent.
                json = ""
            else:
                json = lower_camel(rname)
                if (modpath, name) not in SPECIAL:
                    print(f"warn: {modpath} {name}.{rname}: no k8s-openapi name, using {json}", file=sys.stderr)
            if attr.startswith("btree_map"):
                kv = re.search(r'btree_map = "string, (\w+)"', attr).group(1)
                card = "Map"
                if kv == "message":
                    vt = rtype.rsplit(",", 1)[1].strip().rstrip(">").strip()
                    ref = resolve(modpath, vt)
                    ty = ("Msg", ref)
                else:
                    ty = (SCALARS[kv], None)
            else:
                kind = attr.split(",")[0].split("=")[0].strip()
                card = "Repeated" if " repeated" in attr else ("Inline" if json == "" else "Single")
                if kind == "message":
                    ty = ("Msg", resolve(modpath, inner_type(rtype)))
                else:
                    ty = (SCALARS[kind], None)
            if ty[0] == "Msg":
                todo.append(ty[1])
            out.append((tag, json, card, ty))
        seen[key] = (goname or name, out)

    files = {}
    for (modpath, name), (goname, fields) in sorted(seen.items()):
        files.setdefault(pkg_key(modpath), []).append((modpath, name, goname, fields))
    for old in glob.glob(os.path.join(OUT, "gen_*.rs")):
        os.remove(old)
    mods = []
    for pkg, msgs in sorted(files.items()):
        mods.append(pkg)
        lines = [f"//! Generated field tables for the `{proto_pkg(msgs[0][0])}` protobuf package.",
                 "//!", "//! @generated by `tools/gen_schema.py` from k8s-pb 0.9.0 and k8s-openapi 0.29.0 (v1_37);",
                 "//! do not edit by hand.", "",
                 "#[allow(unused_imports)]",
                 "use super::*;", ""]
        for modpath, name, goname, fields in msgs:
            special = SPECIAL.get((modpath, name), "StringList" if name == "ExtraValue" else "None")
            cname = const_name(modpath, name)
            lines.append(f"/// `{proto_pkg(modpath)}.{goname}`.")
            lines.append(f"pub(crate) static {cname}: Message = Message {{")
            lines.append(f'    name: "{proto_pkg(modpath)}.{goname}",')
            lines.append(f"    special: Special::{special},")
            lines.append("    fields: &[")
            for tag, json, card, (t, ref) in sorted(fields):
                tys = f"Ty::Msg(&{const_name(*ref)})" if t == "Msg" else f"Ty::{t}"
                lines.append(f'        f({tag}, "{json}", Card::{card}, {tys}),')
            lines.append("    ],")
            lines.append("};")
            lines.append("")
        open(os.path.join(OUT, f"gen_{pkg}.rs"), "w").write("\n".join(lines))
    print("modules:", " ".join(mods))
    print("messages:", len(seen), "fields:", sum(len(f) for _, f in seen.values()))


if __name__ == "__main__":
    main()
