"""dpcert verify: white-box certification, black-box audits and the ``dpcert`` command."""
