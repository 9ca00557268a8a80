// retra's version, recorded in every manifest. Thread safety: constants.
#pragma once

#include <string_view>

namespace retra {
inline constexpr std::string_view kVersion = "0.1.0";
}
