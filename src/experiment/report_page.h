// The fixed parts of report.html: the style sheet and the script that draws the embedded data
// (report_page.cpp). Kept apart from report.cpp, which gathers the data.
#pragma once

namespace steer {

extern const char* const kReportStyle;   // CSS
extern const char* const kReportScript;  // plain JavaScript, no dependencies

}  // namespace steer
