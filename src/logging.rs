//! The severity of a server's log messages (`notifications/message`), and the level a client
//! asks for with [`Client::set_log_level`](crate::Client::set_log_level).

use core::fmt;

/// How severe a log message is, least first: the eight levels of RFC 5424 (syslog), which
/// every revision of the spec names and none extends, so a match over them is complete. A
/// level asked for means that level and every one above it.
///
/// ```
/// use mcp_sansio::LogLevel;
///
/// assert!(LogLevel::Warning > LogLevel::Info);
/// assert_eq!(LogLevel::from_name("critical"), Some(LogLevel::Critical));
/// assert_eq!(LogLevel::from_name("Critical"), None);
/// assert_eq!(LogLevel::Notice.to_string(), "notice");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `debug`: detail for whoever debugs the server.
    Debug,
    /// `info`: what the server is doing.
    Info,
    /// `notice`: normal but worth noting.
    Notice,
    /// `warning`: something may be wrong.
    Warning,
    /// `error`: something failed.
    Error,
    /// `critical`: a part of the server failed.
    Critical,
    /// `alert`: someone must act at once.
    Alert,
    /// `emergency`: the server is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level as the spec writes it: `debug` ... `emergency`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level `name` writes, exactly as the spec does (lower case); `None` for any other
    /// text, which is no level.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == name)
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_level_reads_back_from_its_name_and_the_order_is_rfc_5424s() {
        for (rank, level) in LogLevel::ALL.into_iter().enumerate() {
            assert_eq!(LogLevel::from_name(level.as_str()), Some(level));
            assert!(LogLevel::ALL[..rank].iter().all(|lower| *lower < level));
        }
        for name in ["", "warn", "Info", "INFO", " info", "trace", "fatal"] {
            assert_eq!(LogLevel::from_name(name), None, "{name:?}");
        }
    }
}
