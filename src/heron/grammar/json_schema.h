#pragma once
// JSON schema (draft 2020-12 / draft-07 vocabulary) -> grammar of the JSON text that
// satisfies it. Output is compact-ish: between tokens at most "", " " or "\n" plus up to 20
// spaces or tabs, and nothing after the root value.
//
// Supported: type (and type arrays), properties, required, additionalProperties, enum,
// const, items, prefixItems (draft-07 array `items` + additionalItems), minItems,
// maxItems, anyOf, oneOf (as anyOf), allOf of one schema, $ref to "#..." JSON pointers
// (recursion included), minLength, maxLength, pattern (see regex.h), format (date, time,
// date-time, uuid, email; other formats are annotations), minimum, maximum,
// exclusiveMinimum, exclusiveMaximum. Annotations are ignored; any other keyword is an
// error naming it.
//
// Choices that make the grammar a subset of what the schema allows:
// - additionalProperties absent means false (only the listed properties), as OpenAI's
//   strict mode and llama.cpp do (an object schema with neither properties nor
//   additionalProperties nor required is any object); properties appear in the schema's order (pass
//   an ordered_json to keep it; nlohmann::json sorts keys), required ones always.
// - integers have at most 16 digits, fractions at most 16, exponents at most 2; bounded
//   numbers have no exponent and a fraction only where the whole integer part's interval
//   lies inside the bounds.
// - a schema without `type` takes the type its keywords imply (properties -> object, ...).
#include <memory>

#include <nlohmann/json.hpp>

#include "heron/grammar/grammar.h"

namespace heron::grammar {

// Throws heron::Error naming the JSON pointer and keyword for unsupported keywords or
// invalid schemas, e.g. "unsupported JSON schema keyword 'not' at /properties/a".
std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::ordered_json& schema);
std::shared_ptr<const Grammar> compile_json_schema(const nlohmann::json& schema);
// Any JSON object (Ollama format:"json", OpenAI response_format json_object).
std::shared_ptr<const Grammar> json_object_grammar();

}  // namespace heron::grammar
