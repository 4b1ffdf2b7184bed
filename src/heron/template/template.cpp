#include "heron/template/template.h"

#include <memory>
#include <vector>

#include "heron/core/error.h"
#include "heron/template/failure.h"
#include "heron/template/interpreter.h"
#include "heron/template/json_context.h"
#include "heron/template/parser.h"

namespace heron::chat {

namespace {

std::string render_with(const jinja::Program& program, const nlohmann::ordered_json& context,
                        const RenderOptions& options) {
  if (!context.is_object()) throw Error("chat template context must be a JSON object");
  // Declared before the interpreter: values borrow from the pool until the render ends.
  jinja::JsonPool pool;
  std::vector<jinja::Value> globals = program.initial;
  for (const auto& [key, value] : context.get_ref<const nlohmann::ordered_json::object_t&>()) {
    auto slot = program.slots.find(key);  // context entries the template never names: skipped
    if (slot != program.slots.end()) {
      globals[static_cast<size_t>(slot->second)] = jinja::from_json(pool, value);
    }
  }
  jinja::RenderSettings settings;
  settings.limits.max_output_bytes = options.max_output_bytes;
  settings.limits.max_steps = options.max_steps;
  settings.limits.max_recursion_depth = options.max_recursion_depth;
  settings.now = options.now;
  jinja::Interpreter interp(program, std::move(globals), settings);
  try {
    return interp.render();
  } catch (const Error&) {
    throw;
  } catch (const jinja::Failure& f) {  // raised outside any node (should not happen)
    throw Error("chat template error: " + f.type + ": " + f.message);
  } catch (const std::exception& e) {  // e.g. an allocation failure: still the user's input
    throw Error(std::string("chat template error: ") + e.what());
  }
}

}  // namespace

Template Template::parse(const std::string& source) {
  Template t;
  t.program_ = std::make_shared<const jinja::Program>(jinja::parse(source));
  return t;
}

std::string Template::render(const nlohmann::ordered_json& context,
                             const RenderOptions& options) const {
  if (!program_) throw Error("chat template: render() called on a template that was never parsed");
  return render_with(*program_, context, options);
}

std::string Template::render(const nlohmann::json& context, const RenderOptions& options) const {
  return render(nlohmann::ordered_json(context), options);
}

}  // namespace heron::chat
