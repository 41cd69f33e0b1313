//! The tools' names, one a tool, in the order `tools/list` gives them: what a call names and
//! what a tool names itself or another by. The registry (`tools/mod.rs`) gives each name its
//! module, and each tool's spec takes its wire name from here, so a name has one spelling.

/// One of the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolName {
    /// Tables and views.
    ListTables,
    /// Data files of the declared folders.
    ListFiles,
    /// One table's columns and indexes.
    DescribeTable,
    /// Run SQL.
    Query,
    /// A chart of a query's result.
    Plot,
    /// First rows of a table.
    SampleRows,
    /// A plan.
    ExplainQuery,
    /// Find tables and columns by text.
    SearchSchema,
    /// Foreign keys.
    ListRelationships,
    /// Server, limits, sandbox posture.
    ServerInfo,
}

impl ToolName {
    /// All tools, in the order `tools/list` gives them.
    pub const ALL: [ToolName; 10] = [
        ToolName::ListTables,
        ToolName::ListFiles,
        ToolName::DescribeTable,
        ToolName::Query,
        ToolName::Plot,
        ToolName::SampleRows,
        ToolName::ExplainQuery,
        ToolName::SearchSchema,
        ToolName::ListRelationships,
        ToolName::ServerInfo,
    ];

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolName::ListTables => "list_tables",
            ToolName::ListFiles => "list_files",
            ToolName::DescribeTable => "describe_table",
            ToolName::Query => "query",
            ToolName::Plot => "plot",
            ToolName::SampleRows => "sample_rows",
            ToolName::ExplainQuery => "explain_query",
            ToolName::SearchSchema => "search_schema",
            ToolName::ListRelationships => "list_relationships",
            ToolName::ServerInfo => "server_info",
        }
    }

    /// The tool of that wire name.
    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_name_is_listed_once() {
        // Exhaustive: a new tool does not compile here until it has its place in `ALL`.
        let position = |tool: ToolName| match tool {
            ToolName::ListTables => 0,
            ToolName::ListFiles => 1,
            ToolName::DescribeTable => 2,
            ToolName::Query => 3,
            ToolName::Plot => 4,
            ToolName::SampleRows => 5,
            ToolName::ExplainQuery => 6,
            ToolName::SearchSchema => 7,
            ToolName::ListRelationships => 8,
            ToolName::ServerInfo => 9,
        };
        for (i, tool) in ToolName::ALL.into_iter().enumerate() {
            assert_eq!(
                position(tool),
                i,
                "{tool:?} is out of place in ToolName::ALL"
            );
        }
    }
}
